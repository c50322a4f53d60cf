//! The TPC-C population (specification 5.11, clause 4.3.3.1), table by table in key order.
//!
//! Per warehouse: 1 WAREHOUSE, 10 DISTRICT, 100,000 STOCK; per district: 3,000 CUSTOMER,
//! 3,000 HISTORY (one per customer), 3,000 ORDER (O_C_ID a random permutation of the
//! customers; O_CARRIER_ID random in [1..10] below order 2,101, NULL from it; O_OL_CNT random
//! in [5..15]), their ORDER-LINEs (OL_I_ID random in [1..100,000]; delivered with amount 0
//! below order 2,101, undelivered with a random amount from it), 900 NEW-ORDER (orders
//! 2,101..3,000); 100,000 ITEM in total. Values as the clause says: a-strings and n-strings,
//! zip codes, C_LAST from the syllables (the first 1,000 customers of a district take
//! numbers 0..999 in order, the others NURand(255, 0, 999) with the load's C), C_MIDDLE "OE",
//! C_CREDIT "BC" for exactly 10% of each district's customers chosen at random, "ORIGINAL" in
//! exactly 10% of I_DATA and of each warehouse's S_DATA, W_YTD 300,000.00, D_YTD 30,000.00,
//! D_NEXT_O_ID 3,001, C_BALANCE -10.00, and so on. With a reduced [`TpccScale`] the same
//! rules apply to the smaller counts.
//!
//! Every table is generated in key order (the name and orders-by-customer indexes are sorted
//! per district) from random streams keyed by (seed, table, warehouse, district), so related
//! tables regenerate the same rows without holding a whole table in memory: the loader keeps
//! one district's customers or orders at a time.

use std::iter;

use rand::Rng;
use rand::rngs::SmallRng;

use super::random::{
    A_C_LAST, NurandConstants, a_string, last_name, n_string, nurand, permutation, random_subset,
    with_original, zip_code,
};
use super::schema::{
    Address, Customer, DISTRICTS_PER_WAREHOUSE, District, History, Item, META_KEY, Meta, Order,
    OrderLine, Stock, TREE_NAMES, Warehouse, customer_key, customer_name_key, district_key,
    history_key, item_key, order_customer_key, order_key, order_line_key, stock_key, warehouse_key,
};
use super::{TpccConfig, TpccScale, now_micros};
use crate::error::Result;
use crate::kv::KvEngine;
use crate::workload::record::{LoadProgress, LoadReport, TableLoader, seeded_rng};

/// W_YTD at load: 300,000.00.
pub const WAREHOUSE_YTD_CENTS: i64 = 30_000_000;
/// D_YTD at load: 30,000.00.
pub const DISTRICT_YTD_CENTS: i64 = 3_000_000;

/// Labels of the random streams, one per table.
#[derive(Clone, Copy)]
enum Stream {
    Constants = 1,
    Item,
    Warehouse,
    District,
    Customer,
    History,
    Order,
    OrderLine,
    Stock,
}

/// Fills the TPC-C trees for `config` (which must be empty).
///
/// # Errors
/// The engine's.
pub fn load(
    config: &TpccConfig,
    engine: &dyn KvEngine,
    progress: &mut dyn FnMut(LoadProgress),
) -> Result<LoadReport> {
    config.validate()?;
    let mut constants = seeded_rng(config.seed, &[Stream::Constants as u64]);
    let population = Population {
        seed: config.seed,
        scale: config.scale,
        warehouses: config.warehouses,
        c_last_load: NurandConstants::load_c_last(&mut constants),
        now: now_micros(),
    };
    let p = &population;
    let mut loader = TableLoader::new(engine, TREE_NAMES.len(), progress);
    loader.load("tpcc.item", p.items())?;
    loader.load("tpcc.warehouse", p.warehouse_rows())?;
    loader.load("tpcc.district", p.district_rows())?;
    loader.load("tpcc.customer", p.customer_rows())?;
    loader.load("tpcc.customer_name", p.customer_name_rows())?;
    loader.load("tpcc.history", p.history_rows())?;
    loader.load("tpcc.order", p.order_rows())?;
    loader.load("tpcc.order_customer", p.order_customer_rows())?;
    loader.load("tpcc.new_order", p.new_order_rows())?;
    loader.load("tpcc.order_line", p.order_line_rows())?;
    loader.load("tpcc.stock", p.stock_rows())?;
    let meta = Meta {
        warehouses: config.warehouses,
        items: config.scale.items,
        customers_per_district: config.scale.customers_per_district,
        c_last_load: population.c_last_load,
    };
    loader.load("tpcc.meta", iter::once((META_KEY.to_vec(), meta.encode())))?;
    Ok(loader.finish())
}

/// The deterministic generator of every row.
struct Population {
    seed: u64,
    scale: TpccScale,
    warehouses: u16,
    c_last_load: u32,
    now: u64,
}

type Pair = (Vec<u8>, Vec<u8>);

fn address(rng: &mut SmallRng) -> Address {
    Address {
        street_1: a_string(rng, 10, 20),
        street_2: a_string(rng, 10, 20),
        city: a_string(rng, 10, 20),
        state: a_string(rng, 2, 2),
        zip: zip_code(rng),
    }
}

impl Population {
    fn rng(&self, stream: Stream, w: u16, d: u8) -> SmallRng {
        seeded_rng(self.seed, &[stream as u64, u64::from(w), u64::from(d)])
    }

    fn districts(&self) -> impl Iterator<Item = (u16, u8)> + use<> {
        (1..=self.warehouses).flat_map(|w| (1..=DISTRICTS_PER_WAREHOUSE).map(move |d| (w, d)))
    }

    fn items(&self) -> impl Iterator<Item = Pair> + '_ {
        let mut rng = self.rng(Stream::Item, 0, 0);
        let count = self.scale.items;
        let original = random_subset(&mut rng, count as usize, count as usize / 10);
        (1..=count).map(move |i| {
            let data = a_string(&mut rng, 26, 50);
            let item = Item {
                im_id: rng.gen_range(1..=10_000),
                name: a_string(&mut rng, 14, 24),
                price: rng.gen_range(100..=10_000),
                data: if original[i as usize - 1] {
                    with_original(&mut rng, data)
                } else {
                    data
                },
            };
            (item_key(i).to_vec(), item.encode())
        })
    }

    fn warehouse_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        (1..=self.warehouses).map(|w| {
            let mut rng = self.rng(Stream::Warehouse, w, 0);
            let row = Warehouse {
                name: a_string(&mut rng, 6, 10),
                address: address(&mut rng),
                tax: rng.gen_range(0..=2000),
                ytd: WAREHOUSE_YTD_CENTS,
            };
            (warehouse_key(w).to_vec(), row.encode())
        })
    }

    fn district_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().map(|(w, d)| {
            let mut rng = self.rng(Stream::District, w, d);
            let row = District {
                name: a_string(&mut rng, 6, 10),
                address: address(&mut rng),
                tax: rng.gen_range(0..=2000),
                ytd: DISTRICT_YTD_CENTS,
                next_o_id: self.scale.orders_per_district() + 1,
            };
            (district_key(w, d).to_vec(), row.encode())
        })
    }

    /// The customers of district (w, d), C_ID 1.. in order.
    fn customers(&self, w: u16, d: u8) -> Vec<Customer> {
        let mut rng = self.rng(Stream::Customer, w, d);
        let count = self.scale.customers_per_district;
        let names = self.scale.last_names();
        let bad_credit = random_subset(&mut rng, count as usize, count as usize / 10);
        (1..=count)
            .map(|c| {
                let number = if c <= names {
                    c - 1
                } else {
                    nurand(&mut rng, A_C_LAST, self.c_last_load, 0, names - 1)
                };
                Customer {
                    first: a_string(&mut rng, 8, 16),
                    middle: b"OE".to_vec(),
                    last: last_name(number).into_bytes(),
                    address: address(&mut rng),
                    phone: n_string(&mut rng, 16, 16),
                    since: self.now,
                    credit: if bad_credit[c as usize - 1] {
                        b"BC".to_vec()
                    } else {
                        b"GC".to_vec()
                    },
                    credit_lim: 5_000_000,
                    discount: rng.gen_range(0..=5000),
                    balance: -1000,
                    ytd_payment: 1000,
                    payment_cnt: 1,
                    delivery_cnt: 0,
                    data: a_string(&mut rng, 300, 500),
                }
            })
            .collect()
    }

    fn customer_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().flat_map(|(w, d)| {
            self.customers(w, d)
                .into_iter()
                .zip(1u32..)
                .map(move |(row, c)| (customer_key(w, d, c).to_vec(), row.encode()))
        })
    }

    fn customer_name_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().flat_map(|(w, d)| {
            let mut keys: Vec<[u8; 39]> = self
                .customers(w, d)
                .iter()
                .zip(1u32..)
                .map(|(row, c)| customer_name_key(w, d, &row.last, &row.first, c))
                .collect();
            keys.sort_unstable();
            keys.into_iter().map(|key| (key.to_vec(), Vec::new()))
        })
    }

    fn history_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().flat_map(|(w, d)| {
            let mut rng = self.rng(Stream::History, w, d);
            let now = self.now;
            (1..=self.scale.customers_per_district).map(move |c| {
                let row = History {
                    c_id: c,
                    c_d_id: d,
                    c_w_id: w,
                    d_id: d,
                    w_id: w,
                    date: now,
                    amount: 1000,
                    data: a_string(&mut rng, 12, 24),
                };
                (history_key(w, d, 0, 0, u64::from(c)).to_vec(), row.encode())
            })
        })
    }

    /// The orders of district (w, d), O_ID 1.. in order.
    fn orders(&self, w: u16, d: u8) -> Vec<Order> {
        let mut rng = self.rng(Stream::Order, w, d);
        let customers = permutation(&mut rng, self.scale.customers_per_district);
        let first_undelivered = self.scale.first_undelivered_order();
        customers
            .into_iter()
            .zip(1u32..)
            .map(|(c_id, o)| Order {
                c_id,
                entry_d: self.now,
                carrier_id: if o < first_undelivered {
                    rng.gen_range(1..=10)
                } else {
                    0
                },
                ol_cnt: rng.gen_range(5..=15),
                all_local: true,
            })
            .collect()
    }

    fn order_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().flat_map(|(w, d)| {
            self.orders(w, d)
                .into_iter()
                .zip(1u32..)
                .map(move |(row, o)| (order_key(w, d, o).to_vec(), row.encode()))
        })
    }

    fn order_customer_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().flat_map(|(w, d)| {
            let mut keys: Vec<[u8; 11]> = self
                .orders(w, d)
                .iter()
                .zip(1u32..)
                .map(|(row, o)| order_customer_key(w, d, row.c_id, o))
                .collect();
            keys.sort_unstable();
            keys.into_iter().map(|key| (key.to_vec(), Vec::new()))
        })
    }

    fn new_order_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        let first = self.scale.first_undelivered_order();
        let last = self.scale.orders_per_district();
        self.districts().flat_map(move |(w, d)| {
            (first..=last).map(move |o| (order_key(w, d, o).to_vec(), Vec::new()))
        })
    }

    fn order_line_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        self.districts().flat_map(|(w, d)| {
            let mut rng = self.rng(Stream::OrderLine, w, d);
            let first_undelivered = self.scale.first_undelivered_order();
            let items = self.scale.items;
            let now = self.now;
            self.orders(w, d)
                .into_iter()
                .zip(1u32..)
                .flat_map(move |(order, o)| (1..=order.ol_cnt).map(move |n| (o, n)))
                .map(move |(o, n)| {
                    let delivered = o < first_undelivered;
                    let row = OrderLine {
                        i_id: rng.gen_range(1..=items),
                        supply_w_id: w,
                        delivery_d: if delivered { now } else { 0 },
                        quantity: 5,
                        amount: if delivered {
                            0
                        } else {
                            rng.gen_range(1..=999_999)
                        },
                        dist_info: a_string(&mut rng, 24, 24),
                    };
                    (order_line_key(w, d, o, n).to_vec(), row.encode())
                })
        })
    }

    fn stock_rows(&self) -> impl Iterator<Item = Pair> + '_ {
        (1..=self.warehouses).flat_map(|w| {
            let mut rng = self.rng(Stream::Stock, w, 0);
            let count = self.scale.items;
            let original = random_subset(&mut rng, count as usize, count as usize / 10);
            (1..=count).map(move |i| {
                let quantity = rng.gen_range(10..=100);
                let dist = std::array::from_fn(|_| {
                    let mut info = [0u8; 24];
                    info.copy_from_slice(&a_string(&mut rng, 24, 24));
                    info
                });
                let data = a_string(&mut rng, 26, 50);
                let row = Stock {
                    quantity,
                    dist,
                    ytd: 0,
                    order_cnt: 0,
                    remote_cnt: 0,
                    data: if original[i as usize - 1] {
                        with_original(&mut rng, data)
                    } else {
                        data
                    },
                };
                (stock_key(w, i).to_vec(), row.encode())
            })
        })
    }
}
