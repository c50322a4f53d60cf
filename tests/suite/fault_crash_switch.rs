//! A `CrashSwitch` shared by two fault devices crashes both at the same instant: once one
//! crashes (by operation count or on demand), every later operation on the other is refused.

use std::sync::Arc;

use flashbuf::DeviceError;
use flashbuf::device::fault::{CrashSwitch, FaultConfig, FaultDevice};
use flashbuf::device::memory::MemoryDevice;
use flashbuf::device::{AlignedBuf, Device};

const PAGE: usize = 4096;

fn device(switch: &Arc<CrashSwitch>, crash_after_ops: Option<u64>) -> FaultDevice {
    FaultDevice::new_zeroed(
        Arc::new(MemoryDevice::new(PAGE, 4).unwrap()),
        FaultConfig {
            crash_after_ops,
            crash_switch: Some(Arc::clone(switch)),
            ..FaultConfig::default()
        },
    )
    .unwrap()
}

#[test]
fn devices_sharing_a_switch_crash_together() {
    let switch = CrashSwitch::new();
    let data = device(&switch, Some(2));
    let log = device(&switch, None);
    let buf = AlignedBuf::new(PAGE);
    data.write_page(0, &buf).unwrap();
    log.write_page(0, &buf).unwrap();
    data.sync().unwrap();
    assert_eq!(data.write_page(1, &buf), Err(DeviceError::Crashed));
    assert!(switch.is_tripped());
    assert_eq!(log.write_page(1, &buf), Err(DeviceError::Crashed));
    assert_eq!(log.sync(), Err(DeviceError::Crashed));
    assert!(log.counters().crashed);

    let switch = CrashSwitch::new();
    let data = device(&switch, None);
    let log = device(&switch, None);
    log.crash().unwrap();
    assert_eq!(
        data.sync(),
        Err(DeviceError::Crashed),
        "an on-demand crash trips it too"
    );
}
