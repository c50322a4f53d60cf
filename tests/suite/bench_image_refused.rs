//! Image files for `flashbuf bench --db PATH` (`flashbuf load`): an image written and read back
//! with the same load parameters gives the same pages; an image loaded with other parameters,
//! a file that is not an image, and a database bound to a log are refused with a clear error;
//! `write_file` never overwrites an existing file.

use std::path::PathBuf;

use flashbuf::bench::driver::RecordSpec;
use flashbuf::bench::image::Image;
use flashbuf::txn::{KvConfig, KvStore, log_path_for};
use flashbuf::workload::tpcc::{TpccConfig, TpccScale};

const PAGE_SIZE: usize = 4096;

fn spec(warehouses: u16) -> RecordSpec {
    let mut config = TpccConfig::new(warehouses);
    config.scale = TpccScale::reduced(200, 30).unwrap();
    RecordSpec::Tpcc(config)
}

fn temp(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "flashbuf-image-refused-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(log_path_for(&path));
    path
}

fn error_of(result: flashbuf::Result<Image>) -> String {
    result.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn images_round_trip_and_mismatches_are_refused() {
    let image = Image::build(&spec(1), PAGE_SIZE, &mut |_| {}).unwrap();
    let path = temp("one.img");
    image.write_file(&path).unwrap();
    let err = image.write_file(&path).err().map(|e| e.to_string());
    assert!(
        err.as_deref()
            .unwrap_or_default()
            .contains("must not exist"),
        "{err:?}"
    );

    let back = Image::read_file(&path, &spec(1)).unwrap();
    assert_eq!(back.loaded_pages, image.loaded_pages);
    assert_eq!(back.capacity_pages, image.capacity_pages);
    assert_eq!(back.page_size, PAGE_SIZE);
    assert_eq!(back.load_key, spec(1).load_key());

    let err = error_of(Image::read_file(&path, &spec(2)));
    assert!(
        err.contains("loaded with") && err.contains("warehouses=1") && err.contains("warehouses=2"),
        "{err}"
    );

    let junk = temp("junk.img");
    std::fs::write(&junk, vec![0xa5u8; 3 * PAGE_SIZE]).unwrap();
    let err = error_of(Image::read_file(&junk, &spec(1)));
    assert!(err.contains("not a flashbuf image"), "{err}");

    let missing = temp("missing.img");
    let err = error_of(Image::read_file(&missing, &spec(1)));
    assert!(err.contains("missing.img"), "{err}");

    let bound = temp("bound.db");
    let config = KvConfig::new(64);
    let (kv, _) = KvStore::open_specs(
        &format!("file:{}", bound.display()),
        &format!("file:{}", log_path_for(&bound).display()),
        PAGE_SIZE,
        512,
        &config,
    )
    .unwrap();
    kv.close().unwrap();
    let err = error_of(Image::read_file(&bound, &spec(1)));
    assert!(err.contains("bound to log"), "{err}");

    for file in [&path, &junk, &bound, &log_path_for(&bound)] {
        let _ = std::fs::remove_file(file);
    }
}

/// A YCSB image records its key format: one loaded with binary keys is refused under YCSB's
/// text keys (and the other way round), and an image of text keys keeps the load key it had
/// before the key format existed (no `key_format` in it), so older image files stay readable.
#[test]
fn a_ycsb_image_is_refused_under_the_other_key_format() {
    use flashbuf::workload::ycsb::{KeyFormat, YcsbConfig, YcsbWorkload};
    let ycsb = |format: KeyFormat| {
        let mut config = YcsbConfig::standard(YcsbWorkload::C, 200);
        config.field_count = 1;
        config.field_length = 20;
        config.key_format = format;
        RecordSpec::Ycsb(config)
    };
    let (text, binary) = (ycsb(KeyFormat::Text), ycsb(KeyFormat::Binary));
    assert!(
        !text.load_key().contains("key_format"),
        "{}",
        text.load_key()
    );
    assert!(binary.load_key().contains("key_format=binary"));
    let image = Image::build(&binary, PAGE_SIZE, &mut |_| {}).unwrap();
    let path = temp("binary.img");
    image.write_file(&path).unwrap();
    assert_eq!(
        Image::read_file(&path, &binary).unwrap().load_key,
        binary.load_key()
    );
    let err = error_of(Image::read_file(&path, &text));
    assert!(
        err.contains("loaded with") && err.contains("key_format=binary"),
        "{err}"
    );
    let _ = std::fs::remove_file(&path);
}
