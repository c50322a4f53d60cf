//! The TPC-C schema (specification 5.11, clause 1.3) as key-value trees.
//!
//! Nine tables with their primary keys, plus two secondary indexes and a metadata tree:
//!
//! | tree | key (big-endian) | value |
//! |------|------------------|-------|
//! | `tpcc.warehouse` | W_ID u16 | [`Warehouse`] |
//! | `tpcc.district` | W_ID u16, D_ID u8 | [`District`] |
//! | `tpcc.customer` | W_ID, D_ID, C_ID u32 | [`Customer`] |
//! | `tpcc.customer_name` | W_ID, D_ID, C_LAST (16 bytes, NUL-padded), C_FIRST (16), C_ID | empty |
//! | `tpcc.history` | H_W_ID, H_D_ID, session u64, thread u32, sequence u64 | [`History`] |
//! | `tpcc.order` | W_ID, D_ID, O_ID u32 | [`Order`] |
//! | `tpcc.order_customer` | W_ID, D_ID, C_ID, O_ID | empty |
//! | `tpcc.new_order` | W_ID, D_ID, O_ID | empty |
//! | `tpcc.order_line` | W_ID, D_ID, O_ID, OL_NUMBER u8 | [`OrderLine`] |
//! | `tpcc.item` | I_ID u32 | [`Item`] |
//! | `tpcc.stock` | W_ID, I_ID | [`Stock`] |
//! | `tpcc.meta` | `"config"` | [`Meta`] |
//!
//! `customer_name` is the customer-by-last-name index the specification's Payment and
//! Order-Status need (rows with one C_LAST sorted by C_FIRST); `order_customer` finds a
//! customer's newest order for Order-Status (the index every implementation adds; the
//! specification requires none). HISTORY has no primary key in the specification; its key
//! here is unique per row: the load uses session 0, a run the microseconds since the epoch at
//! which the workload object was built, plus the client thread and its counter.
//!
//! Column types: money is `i64` cents (`numeric(n,2)`), rates are `u16` ten-thousandths
//! (`numeric(4,4)`), dates `u64` microseconds since the epoch with 0 for NULL, O_CARRIER_ID 0
//! for NULL; `CHAR(n)` columns are fixed `n` bytes, `VARCHAR` columns length-prefixed. Every
//! decoder checks lengths and reports a malformed row as [`crate::Error::InvalidArgument`].
//!
//! Rows with string columns are generic over the string's storage `B`: owned `Vec<u8>` (the
//! default) where a row is built, as the load does; `&[u8]` borrowed from the stored value
//! where a row is decoded, so that a transaction that reads a row allocates nothing for its
//! columns and keeps owned data only for what it changes (C_DATA in Payment). `encode_into`
//! writes into a caller's reused buffer.

use crate::error::Result;
use crate::kv::{KvEngine, TreeId};
use crate::workload::record::{RowReader, RowWriter};

/// Districts per warehouse (fixed by the specification).
pub const DISTRICTS_PER_WAREHOUSE: u8 = 10;
/// Bytes of C_LAST and C_FIRST in the name index (both are at most 16 characters).
pub const NAME_KEY_BYTES: usize = 16;
/// Length of each S_DIST_xx and OL_DIST_INFO.
pub const DIST_INFO_BYTES: usize = 24;
/// The key of the one row of `tpcc.meta`.
pub const META_KEY: &[u8] = b"config";

/// The trees of a TPC-C database.
#[derive(Debug, Clone, Copy)]
pub struct Trees {
    /// WAREHOUSE.
    pub warehouse: TreeId,
    /// DISTRICT.
    pub district: TreeId,
    /// CUSTOMER.
    pub customer: TreeId,
    /// Customers by (last name, first name).
    pub customer_name: TreeId,
    /// HISTORY.
    pub history: TreeId,
    /// ORDER.
    pub order: TreeId,
    /// Orders by customer.
    pub order_customer: TreeId,
    /// NEW-ORDER.
    pub new_order: TreeId,
    /// ORDER-LINE.
    pub order_line: TreeId,
    /// ITEM.
    pub item: TreeId,
    /// STOCK.
    pub stock: TreeId,
    /// Load parameters.
    pub meta: TreeId,
}

/// Tree names, in load order.
pub const TREE_NAMES: [&str; 12] = [
    "tpcc.item",
    "tpcc.warehouse",
    "tpcc.district",
    "tpcc.customer",
    "tpcc.customer_name",
    "tpcc.history",
    "tpcc.order",
    "tpcc.order_customer",
    "tpcc.new_order",
    "tpcc.order_line",
    "tpcc.stock",
    "tpcc.meta",
];

impl Trees {
    /// Opens (creating if needed) every tree.
    ///
    /// # Errors
    /// The engine's.
    pub fn open(engine: &dyn KvEngine) -> Result<Trees> {
        let [
            item,
            warehouse,
            district,
            customer,
            customer_name,
            history,
            order,
            order_customer,
            new_order,
            order_line,
            stock,
            meta,
        ] = TREE_NAMES;
        Ok(Trees {
            warehouse: engine.open_tree(warehouse)?,
            district: engine.open_tree(district)?,
            customer: engine.open_tree(customer)?,
            customer_name: engine.open_tree(customer_name)?,
            history: engine.open_tree(history)?,
            order: engine.open_tree(order)?,
            order_customer: engine.open_tree(order_customer)?,
            new_order: engine.open_tree(new_order)?,
            order_line: engine.open_tree(order_line)?,
            item: engine.open_tree(item)?,
            stock: engine.open_tree(stock)?,
            meta: engine.open_tree(meta)?,
        })
    }
}

fn concat<const N: usize>(parts: &[&[u8]]) -> [u8; N] {
    let mut key = [0u8; N];
    let mut at = 0;
    for part in parts {
        key[at..at + part.len()].copy_from_slice(part);
        at += part.len();
    }
    assert_eq!(at, N, "key parts fill the key");
    key
}

/// WAREHOUSE key.
#[must_use]
pub fn warehouse_key(w: u16) -> [u8; 2] {
    w.to_be_bytes()
}

/// DISTRICT key, also the prefix of the district's customers, orders and order lines.
#[must_use]
pub fn district_key(w: u16, d: u8) -> [u8; 3] {
    concat(&[&w.to_be_bytes(), &[d]])
}

/// CUSTOMER key.
#[must_use]
pub fn customer_key(w: u16, d: u8, c: u32) -> [u8; 7] {
    concat(&[&district_key(w, d), &c.to_be_bytes()])
}

fn padded_name(name: &[u8]) -> [u8; NAME_KEY_BYTES] {
    let mut padded = [0u8; NAME_KEY_BYTES];
    let len = name.len().min(NAME_KEY_BYTES);
    padded[..len].copy_from_slice(&name[..len]);
    padded
}

/// Prefix of the name-index entries of the customers called `last` in district (w, d).
#[must_use]
pub fn customer_name_prefix(w: u16, d: u8, last: &[u8]) -> [u8; 19] {
    concat(&[&district_key(w, d), &padded_name(last)])
}

/// Name-index key: NUL padding keeps bytewise order equal to the names' order.
#[must_use]
pub fn customer_name_key(w: u16, d: u8, last: &[u8], first: &[u8], c: u32) -> [u8; 39] {
    concat(&[
        &customer_name_prefix(w, d, last),
        &padded_name(first),
        &c.to_be_bytes(),
    ])
}

/// The C_ID at the end of a name-index key.
#[must_use]
pub fn customer_id_of_name_key(key: &[u8]) -> Option<u32> {
    let tail: [u8; 4] = key.get(35..39)?.try_into().ok()?;
    Some(u32::from_be_bytes(tail))
}

/// HISTORY key (see the module docs).
#[must_use]
pub fn history_key(w: u16, d: u8, session: u64, thread: u32, sequence: u64) -> [u8; 23] {
    concat(&[
        &district_key(w, d),
        &session.to_be_bytes(),
        &thread.to_be_bytes(),
        &sequence.to_be_bytes(),
    ])
}

/// ORDER and NEW-ORDER key, also the prefix of the order's lines.
#[must_use]
pub fn order_key(w: u16, d: u8, o: u32) -> [u8; 7] {
    concat(&[&district_key(w, d), &o.to_be_bytes()])
}

/// The O_ID in an ORDER or NEW-ORDER key.
#[must_use]
pub fn order_id_of_key(key: &[u8]) -> Option<u32> {
    let tail: [u8; 4] = key.get(3..7)?.try_into().ok()?;
    Some(u32::from_be_bytes(tail))
}

/// Prefix of customer `c`'s entries in the orders-by-customer index.
#[must_use]
pub fn order_customer_prefix(w: u16, d: u8, c: u32) -> [u8; 7] {
    customer_key(w, d, c)
}

/// Orders-by-customer key.
#[must_use]
pub fn order_customer_key(w: u16, d: u8, c: u32, o: u32) -> [u8; 11] {
    concat(&[&customer_key(w, d, c), &o.to_be_bytes()])
}

/// The O_ID at the end of an orders-by-customer key.
#[must_use]
pub fn order_id_of_customer_key(key: &[u8]) -> Option<u32> {
    let tail: [u8; 4] = key.get(7..11)?.try_into().ok()?;
    Some(u32::from_be_bytes(tail))
}

/// ORDER-LINE key.
#[must_use]
pub fn order_line_key(w: u16, d: u8, o: u32, number: u8) -> [u8; 8] {
    concat(&[&order_key(w, d, o), &[number]])
}

/// ITEM key.
#[must_use]
pub fn item_key(i: u32) -> [u8; 4] {
    i.to_be_bytes()
}

/// STOCK key.
#[must_use]
pub fn stock_key(w: u16, i: u32) -> [u8; 6] {
    concat(&[&w.to_be_bytes(), &i.to_be_bytes()])
}

/// Street, city, state and zip, as WAREHOUSE, DISTRICT and CUSTOMER hold them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address<B = Vec<u8>> {
    /// STREET_1, varchar(20).
    pub street_1: B,
    /// STREET_2, varchar(20).
    pub street_2: B,
    /// CITY, varchar(20).
    pub city: B,
    /// STATE, char(2).
    pub state: B,
    /// ZIP, char(9).
    pub zip: B,
}

impl<B: AsRef<[u8]>> Address<B> {
    fn write(&self, row: &mut RowWriter) {
        row.var8(self.street_1.as_ref())
            .var8(self.street_2.as_ref())
            .var8(self.city.as_ref())
            .fixed(self.state.as_ref(), 2)
            .fixed(self.zip.as_ref(), 9);
    }
}

impl<'a> Address<&'a [u8]> {
    fn read(row: &mut RowReader<'a>) -> Result<Address<&'a [u8]>> {
        Ok(Address {
            street_1: row.var8()?,
            street_2: row.var8()?,
            city: row.var8()?,
            state: row.fixed(2)?,
            zip: row.fixed(9)?,
        })
    }
}

/// A WAREHOUSE row (without W_ID, which is the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warehouse<B = Vec<u8>> {
    /// W_NAME, varchar(10).
    pub name: B,
    /// W_STREET_1 .. W_ZIP.
    pub address: Address<B>,
    /// W_TAX in ten-thousandths.
    pub tax: u16,
    /// W_YTD in cents.
    pub ytd: i64,
}

impl<B: AsRef<[u8]>> Warehouse<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(96);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut row = RowWriter::reusing(std::mem::take(out));
        row.var8(self.name.as_ref());
        self.address.write(&mut row);
        *out = row.u16(self.tax).i64(self.ytd).finish();
    }
}

impl<'a> Warehouse<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<Warehouse<&'a [u8]>> {
        let mut row = RowReader::new("WAREHOUSE", bytes);
        let value = Warehouse {
            name: row.var8()?,
            address: Address::read(&mut row)?,
            tax: row.u16()?,
            ytd: row.i64()?,
        };
        row.end()?;
        Ok(value)
    }
}

/// A DISTRICT row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct District<B = Vec<u8>> {
    /// D_NAME, varchar(10).
    pub name: B,
    /// D_STREET_1 .. D_ZIP.
    pub address: Address<B>,
    /// D_TAX in ten-thousandths.
    pub tax: u16,
    /// D_YTD in cents.
    pub ytd: i64,
    /// D_NEXT_O_ID.
    pub next_o_id: u32,
}

impl<B: AsRef<[u8]>> District<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(100);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut row = RowWriter::reusing(std::mem::take(out));
        row.var8(self.name.as_ref());
        self.address.write(&mut row);
        *out = row.u16(self.tax).i64(self.ytd).u32(self.next_o_id).finish();
    }
}

impl<'a> District<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<District<&'a [u8]>> {
        let mut row = RowReader::new("DISTRICT", bytes);
        let value = District {
            name: row.var8()?,
            address: Address::read(&mut row)?,
            tax: row.u16()?,
            ytd: row.i64()?,
            next_o_id: row.u32()?,
        };
        row.end()?;
        Ok(value)
    }
}

/// A CUSTOMER row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Customer<B = Vec<u8>> {
    /// C_FIRST, varchar(16).
    pub first: B,
    /// C_MIDDLE, char(2).
    pub middle: B,
    /// C_LAST, varchar(16).
    pub last: B,
    /// C_STREET_1 .. C_ZIP.
    pub address: Address<B>,
    /// C_PHONE, char(16).
    pub phone: B,
    /// C_SINCE.
    pub since: u64,
    /// C_CREDIT, char(2): "GC" or "BC".
    pub credit: B,
    /// C_CREDIT_LIM in cents.
    pub credit_lim: i64,
    /// C_DISCOUNT in ten-thousandths.
    pub discount: u16,
    /// C_BALANCE in cents.
    pub balance: i64,
    /// C_YTD_PAYMENT in cents.
    pub ytd_payment: i64,
    /// C_PAYMENT_CNT.
    pub payment_cnt: u32,
    /// C_DELIVERY_CNT.
    pub delivery_cnt: u32,
    /// C_DATA, varchar(500).
    pub data: B,
}

impl<B: AsRef<[u8]>> Customer<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(640);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut row = RowWriter::reusing(std::mem::take(out));
        row.var8(self.first.as_ref())
            .fixed(self.middle.as_ref(), 2)
            .var8(self.last.as_ref());
        self.address.write(&mut row);
        *out = row
            .fixed(self.phone.as_ref(), 16)
            .u64(self.since)
            .fixed(self.credit.as_ref(), 2)
            .i64(self.credit_lim)
            .u16(self.discount)
            .i64(self.balance)
            .i64(self.ytd_payment)
            .u32(self.payment_cnt)
            .u32(self.delivery_cnt)
            .var16(self.data.as_ref())
            .finish();
    }
}

impl<'a> Customer<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<Customer<&'a [u8]>> {
        let mut row = RowReader::new("CUSTOMER", bytes);
        let value = Customer {
            first: row.var8()?,
            middle: row.fixed(2)?,
            last: row.var8()?,
            address: Address::read(&mut row)?,
            phone: row.fixed(16)?,
            since: row.u64()?,
            credit: row.fixed(2)?,
            credit_lim: row.i64()?,
            discount: row.u16()?,
            balance: row.i64()?,
            ytd_payment: row.i64()?,
            payment_cnt: row.u32()?,
            delivery_cnt: row.u32()?,
            data: row.var16()?,
        };
        row.end()?;
        Ok(value)
    }
}

/// A HISTORY row (every column: the key is synthetic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History<B = Vec<u8>> {
    /// H_C_ID.
    pub c_id: u32,
    /// H_C_D_ID.
    pub c_d_id: u8,
    /// H_C_W_ID.
    pub c_w_id: u16,
    /// H_D_ID.
    pub d_id: u8,
    /// H_W_ID.
    pub w_id: u16,
    /// H_DATE.
    pub date: u64,
    /// H_AMOUNT in cents.
    pub amount: i64,
    /// H_DATA, varchar(24).
    pub data: B,
}

impl<B: AsRef<[u8]>> History<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(48);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        *out = RowWriter::reusing(std::mem::take(out))
            .u32(self.c_id)
            .u8(self.c_d_id)
            .u16(self.c_w_id)
            .u8(self.d_id)
            .u16(self.w_id)
            .u64(self.date)
            .i64(self.amount)
            .var8(self.data.as_ref())
            .finish();
    }
}

impl<'a> History<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<History<&'a [u8]>> {
        let mut row = RowReader::new("HISTORY", bytes);
        let value = History {
            c_id: row.u32()?,
            c_d_id: row.u8()?,
            c_w_id: row.u16()?,
            d_id: row.u8()?,
            w_id: row.u16()?,
            date: row.u64()?,
            amount: row.i64()?,
            data: row.var8()?,
        };
        row.end()?;
        Ok(value)
    }
}

/// An ORDER row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    /// O_C_ID.
    pub c_id: u32,
    /// O_ENTRY_D.
    pub entry_d: u64,
    /// O_CARRIER_ID, 0 for NULL.
    pub carrier_id: u8,
    /// O_OL_CNT.
    pub ol_cnt: u8,
    /// O_ALL_LOCAL.
    pub all_local: bool,
}

impl Order {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(15);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        *out = RowWriter::reusing(std::mem::take(out))
            .u32(self.c_id)
            .u64(self.entry_d)
            .u8(self.carrier_id)
            .u8(self.ol_cnt)
            .u8(u8::from(self.all_local))
            .finish();
    }

    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &[u8]) -> Result<Order> {
        let mut row = RowReader::new("ORDER", bytes);
        let value = Order {
            c_id: row.u32()?,
            entry_d: row.u64()?,
            carrier_id: row.u8()?,
            ol_cnt: row.u8()?,
            all_local: row.u8()? != 0,
        };
        row.end()?;
        Ok(value)
    }
}

/// An ORDER-LINE row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderLine<B = Vec<u8>> {
    /// OL_I_ID.
    pub i_id: u32,
    /// OL_SUPPLY_W_ID.
    pub supply_w_id: u16,
    /// OL_DELIVERY_D, 0 for NULL.
    pub delivery_d: u64,
    /// OL_QUANTITY.
    pub quantity: u8,
    /// OL_AMOUNT in cents.
    pub amount: i64,
    /// OL_DIST_INFO, char(24).
    pub dist_info: B,
}

impl<B: AsRef<[u8]>> OrderLine<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(48);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        *out = RowWriter::reusing(std::mem::take(out))
            .u32(self.i_id)
            .u16(self.supply_w_id)
            .u64(self.delivery_d)
            .u8(self.quantity)
            .i64(self.amount)
            .fixed(self.dist_info.as_ref(), DIST_INFO_BYTES)
            .finish();
    }
}

impl<'a> OrderLine<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<OrderLine<&'a [u8]>> {
        let mut row = RowReader::new("ORDER-LINE", bytes);
        let value = OrderLine {
            i_id: row.u32()?,
            supply_w_id: row.u16()?,
            delivery_d: row.u64()?,
            quantity: row.u8()?,
            amount: row.i64()?,
            dist_info: row.fixed(DIST_INFO_BYTES)?,
        };
        row.end()?;
        Ok(value)
    }
}

/// An ORDER-LINE row that owns its OL_DIST_INFO without a heap allocation (a row a
/// transaction reads, keeps and writes back).
pub type StoredOrderLine = OrderLine<[u8; DIST_INFO_BYTES]>;

impl OrderLine<&[u8]> {
    /// The row with OL_DIST_INFO copied into an array.
    ///
    /// # Errors
    /// An OL_DIST_INFO not [`DIST_INFO_BYTES`] long.
    pub fn to_array(&self) -> Result<StoredOrderLine> {
        let dist_info = self.dist_info.try_into().map_err(|_| {
            crate::Error::InvalidArgument(format!(
                "malformed ORDER-LINE row: OL_DIST_INFO of {} bytes",
                self.dist_info.len()
            ))
        })?;
        Ok(OrderLine {
            i_id: self.i_id,
            supply_w_id: self.supply_w_id,
            delivery_d: self.delivery_d,
            quantity: self.quantity,
            amount: self.amount,
            dist_info,
        })
    }
}

/// An ITEM row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<B = Vec<u8>> {
    /// I_IM_ID.
    pub im_id: u32,
    /// I_NAME, varchar(24).
    pub name: B,
    /// I_PRICE in cents.
    pub price: i64,
    /// I_DATA, varchar(50).
    pub data: B,
}

impl<B: AsRef<[u8]>> Item<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(88);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        *out = RowWriter::reusing(std::mem::take(out))
            .u32(self.im_id)
            .var8(self.name.as_ref())
            .i64(self.price)
            .var8(self.data.as_ref())
            .finish();
    }
}

impl<'a> Item<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<Item<&'a [u8]>> {
        let mut row = RowReader::new("ITEM", bytes);
        let value = Item {
            im_id: row.u32()?,
            name: row.var8()?,
            price: row.i64()?,
            data: row.var8()?,
        };
        row.end()?;
        Ok(value)
    }
}

/// A STOCK row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stock<B = Vec<u8>> {
    /// S_QUANTITY.
    pub quantity: u16,
    /// S_DIST_01 .. S_DIST_10, char(24) each.
    pub dist: [[u8; DIST_INFO_BYTES]; DISTRICTS_PER_WAREHOUSE as usize],
    /// S_YTD.
    pub ytd: u32,
    /// S_ORDER_CNT.
    pub order_cnt: u32,
    /// S_REMOTE_CNT.
    pub remote_cnt: u32,
    /// S_DATA, varchar(50).
    pub data: B,
}

impl<B: AsRef<[u8]>> Stock<B> {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(320);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut row = RowWriter::reusing(std::mem::take(out));
        row.u16(self.quantity);
        for dist in &self.dist {
            row.fixed(dist, DIST_INFO_BYTES);
        }
        *out = row
            .u32(self.ytd)
            .u32(self.order_cnt)
            .u32(self.remote_cnt)
            .var8(self.data.as_ref())
            .finish();
    }
}

impl<'a> Stock<&'a [u8]> {
    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &'a [u8]) -> Result<Stock<&'a [u8]>> {
        let mut row = RowReader::new("STOCK", bytes);
        let quantity = row.u16()?;
        let mut dist = [[0u8; DIST_INFO_BYTES]; DISTRICTS_PER_WAREHOUSE as usize];
        for slot in &mut dist {
            slot.copy_from_slice(row.fixed(DIST_INFO_BYTES)?);
        }
        let value = Stock {
            quantity,
            dist,
            ytd: row.u32()?,
            order_cnt: row.u32()?,
            remote_cnt: row.u32()?,
            data: row.var8()?,
        };
        row.end()?;
        Ok(value)
    }

    /// S_QUANTITY of a stored value, the row's shape checked as [`Stock::decode`] checks it
    /// but nothing copied (Stock-Level reads only the quantity of about 200 rows).
    ///
    /// # Errors
    /// A malformed row.
    pub fn quantity_of(bytes: &[u8]) -> Result<u16> {
        let mut row = RowReader::new("STOCK", bytes);
        let quantity = row.u16()?;
        // S_DIST_01..10, S_YTD, S_ORDER_CNT, S_REMOTE_CNT.
        row.fixed(DIST_INFO_BYTES * DISTRICTS_PER_WAREHOUSE as usize + 3 * 4)?;
        row.var8()?;
        row.end()?;
        Ok(quantity)
    }
}

/// What the load recorded about the database (the one row of `tpcc.meta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// Number of warehouses.
    pub warehouses: u16,
    /// ITEM rows (100,000 at specification scale).
    pub items: u32,
    /// Customers per district (3,000 at specification scale).
    pub customers_per_district: u32,
    /// The C for C_LAST the load used (run-time C must keep C_DELTA rules relative to it).
    pub c_last_load: u32,
}

impl Meta {
    /// The stored value.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(14);
        self.encode_into(&mut bytes);
        bytes
    }

    /// Writes the stored value into `out`, replacing its contents and reusing its allocation.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        *out = RowWriter::reusing(std::mem::take(out))
            .u16(self.warehouses)
            .u32(self.items)
            .u32(self.customers_per_district)
            .u32(self.c_last_load)
            .finish();
    }

    /// Parses a stored value.
    ///
    /// # Errors
    /// A malformed row.
    pub fn decode(bytes: &[u8]) -> Result<Meta> {
        let mut row = RowReader::new("tpcc.meta", bytes);
        let value = Meta {
            warehouses: row.u16()?,
            items: row.u32()?,
            customers_per_district: row.u32()?,
            c_last_load: row.u32()?,
        };
        row.end()?;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_sort_by_last_then_first() {
        let a = customer_name_key(1, 1, b"BAR", b"Zed", 9);
        let b = customer_name_key(1, 1, b"BARBAR", b"Abe", 1);
        let c = customer_name_key(1, 1, b"BARBAR", b"Abel", 0);
        assert!(a < b && b < c);
        assert!(b.starts_with(&customer_name_prefix(1, 1, b"BARBAR")));
        assert!(!a.starts_with(&customer_name_prefix(1, 1, b"BARBAR")));
        assert_eq!(customer_id_of_name_key(&c), Some(0));
    }

    #[test]
    fn composite_keys_order_numerically() {
        assert!(order_key(1, 2, 255) < order_key(1, 2, 256));
        assert!(order_key(1, 10, 1) > order_key(1, 9, 3000));
        assert!(order_line_key(1, 1, 5, 15) < order_line_key(1, 1, 6, 1));
        assert!(stock_key(2, 1) > stock_key(1, 100_000));
        assert_eq!(order_id_of_key(&order_key(3, 4, 77)), Some(77));
        assert_eq!(
            order_id_of_customer_key(&order_customer_key(3, 4, 5, 78)),
            Some(78)
        );
    }

    #[test]
    fn rows_round_trip() {
        let order = Order {
            c_id: 7,
            entry_d: 99,
            carrier_id: 0,
            ol_cnt: 15,
            all_local: true,
        };
        assert_eq!(Order::decode(&order.encode()).unwrap(), order);
        let mut stock = Stock {
            quantity: 50,
            dist: [[b'x'; DIST_INFO_BYTES]; 10],
            ytd: 0,
            order_cnt: 1,
            remote_cnt: 2,
            data: b"abc".to_vec(),
        };
        stock.dist[3][0] = b'y';
        let encoded = stock.encode();
        let decoded = Stock::decode(&encoded).unwrap();
        assert_eq!(decoded.data, stock.data.as_slice());
        assert_eq!(
            (decoded.quantity, decoded.dist, decoded.remote_cnt),
            (stock.quantity, stock.dist, stock.remote_cnt)
        );
        assert!(Stock::decode(&encoded[..100]).is_err());
        assert_eq!(Stock::quantity_of(&encoded).unwrap(), 50);
        for cut in [0, 1, 100, encoded.len() - 1] {
            assert!(Stock::quantity_of(&encoded[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = encoded.clone();
        longer.push(0);
        assert!(Stock::quantity_of(&longer).is_err());
        assert!(Stock::decode(&longer).is_err());
        let meta = Meta {
            warehouses: 2,
            items: 1000,
            customers_per_district: 300,
            c_last_load: 17,
        };
        assert_eq!(Meta::decode(&meta.encode()).unwrap(), meta);
    }

    #[test]
    fn borrowed_rows_write_back_through_a_reused_buffer() {
        let line = OrderLine {
            i_id: 5,
            supply_w_id: 2,
            delivery_d: 0,
            quantity: 3,
            amount: 1234,
            dist_info: vec![b'd'; DIST_INFO_BYTES],
        };
        let encoded = line.encode();
        let mut stored = OrderLine::decode(&encoded).unwrap().to_array().unwrap();
        assert_eq!(&stored.dist_info[..], line.dist_info.as_slice());
        stored.delivery_d = 77;
        // A buffer holding an older, longer row: encode_into replaces it entirely.
        let mut buffer = vec![0xee; 300];
        stored.encode_into(&mut buffer);
        let back = OrderLine::decode(&buffer).unwrap();
        assert_eq!(
            (back.delivery_d, back.amount, back.dist_info),
            (77, 1234, &stored.dist_info[..])
        );
        let short = OrderLine {
            dist_info: &line.dist_info[..3],
            ..OrderLine::decode(&encoded).unwrap()
        };
        assert!(short.to_array().is_err());
    }
}
