//! Schemes as compositions of the design space (docs/architecture.md's table), and the presets that
//! keep the papers' names.
//!
//! **Grammar** (what `--schemes` and `scheme` accept; `flashbuf schemes` lists it):
//! `PRESET(+PART)*`, where PRESET is one of [`Scheme::ALL`]'s names and each PART replaces one
//! decision of the preset:
//!
//! | decision | parts |
//! |---|---|
//! | replacement order | `lru-midpoint`, `lru`, `clock`, `cflru`, `lru-wsr` |
//! | miss path | `raw`, `lru-c`, `war`, `rw`, `pg`, `ace` |
//! | flush-rate control | `fixed`, `percona`, `self-tuning` |
//! | read-ahead | `seq`, `history` |
//! | RW victim protection | `unsynced-victim` (with the `rw` miss path) |
//!
//! ([`PARTS`] is the list `flashbuf schemes` prints.)
//!
//! For example `pg-clock+ace` is ACE over PostgreSQL's Clock Sweep (the preset `ace-clock`),
//! `vanilla+ace` ACE's writer on InnoDB's LRU. A composition that cannot work is an error that
//! says why: LRU-C's pointer needs an LRU order (it splits the list at the pointer) and brings
//! its own flusher; a flush-rate controller drives InnoDB's page cleaner, not PostgreSQL's
//! bgwriter; one part per decision. A flush-rate controller composes with the LRU-C presets too
//! (`lru-c+self-tuning`): the page cleaner also runs LRU-C's dirty-region flusher, where `P_scan`
//! is basic LRU-C's batch and dynamic batch write ignores it (it writes the whole region), so
//! there the controller tunes `P_io` and the pacing only.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The replacement order (docs/architecture.md's first decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrderKind {
    /// InnoDB's LRU with midpoint insertion.
    LruMidpoint,
    /// Textbook LRU.
    Lru,
    /// PostgreSQL's Clock Sweep.
    Clock,
    /// Clean-first LRU.
    Cflru,
    /// LRU with write sequence reordering.
    LruWsr,
}

/// The miss path (the second decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MissKind {
    /// InnoDB's RAW loop with a single-page flush.
    Raw,
    /// The LRU-C pointer.
    LruC,
    /// WAR's temporary write buffer.
    War,
    /// The fused RW command.
    Rw,
    /// PostgreSQL's backend write.
    Pg,
    /// ACE's concurrent write-back and eviction.
    Ace,
}

/// The background write-back (the third decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WritebackKind {
    /// InnoDB's page cleaner with the LRU tail flush.
    InnodbTail,
    /// LRU-C's flusher with a fixed batch (basic LRU-C).
    LruCFixed,
    /// LRU-C's flusher writing the whole dirty region (dynamic batch write).
    LruCDynamic,
    /// PostgreSQL's bgwriter and spread checkpointer.
    Postgres,
}

/// The flush-rate controller (the fourth decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateKind {
    /// MySQL's fixed per-second `P_scan` and adaptive `P_io`.
    Fixed,
    /// Percona Server 5.6's LRU manager and furious flushing.
    Percona,
    /// The self-tuning paper's Algorithm 3.
    SelfTuning,
}

impl RateKind {
    /// The part's name.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            RateKind::Fixed => "fixed",
            RateKind::Percona => "percona",
            RateKind::SelfTuning => "self-tuning",
        }
    }
}

/// Read-ahead (the fifth decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefetchKind {
    /// None.
    None,
    /// The sequential stream-table prefetcher (`seq`).
    Sequential,
    /// The history-based prefetcher (`history`).
    History,
}

/// The host engine a scheme imitates (torn-page protection and background machinery defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostEngine {
    /// MySQL 5.7's InnoDB: doublewrite, page cleaners, instances.
    Innodb,
    /// PostgreSQL 11: full-page writes, bgwriter, checkpointer.
    Postgres,
}

/// A named preset (the papers' schemes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// InnoDB-style RAW pool tuned for SSD (io_capacity matched to the device, no neighbour
    /// flushing): what the papers call Vanilla.
    Vanilla,
    /// InnoDB-style RAW pool with InnoDB's own defaults (io_capacity 200, neighbour flushing).
    VanillaDefault,
    /// Vanilla with the LRU scan depth set to the CF-LRU window (the LRU-C paper's emulation).
    Cflru,
    /// Write-after-read with a temporary write buffer.
    War,
    /// The fused read-write command on a read stall.
    Rw,
    /// LRU-C pointer, fixed-size background batches.
    LruCBasic,
    /// LRU-C with dynamic batch write of the whole dirty region.
    LruCDbw,
    /// LRU-C with dynamic batch write and the LRU-M / LRU-D mutex split.
    LruC,
    /// PostgreSQL: Clock Sweep, backend writes, bgwriter.
    PgClock,
    /// PostgreSQL with LRU.
    PgLru,
    /// PostgreSQL with CFLRU.
    PgCflru,
    /// PostgreSQL with LRU-WSR.
    PgLruWsr,
    /// ACE over Clock Sweep.
    AceClock,
    /// ACE over LRU.
    AceLru,
    /// ACE over CFLRU.
    AceCflru,
    /// ACE over LRU-WSR.
    AceLruWsr,
}

impl Scheme {
    /// The InnoDB family, in the order of the papers' comparisons (`--schemes all`).
    pub const ALL: &'static [Scheme] = &[
        Scheme::Vanilla,
        Scheme::VanillaDefault,
        Scheme::Cflru,
        Scheme::War,
        Scheme::Rw,
        Scheme::LruCBasic,
        Scheme::LruCDbw,
        Scheme::LruC,
    ];

    /// The PostgreSQL family and ACE over it.
    pub const POSTGRES: &'static [Scheme] = &[
        Scheme::PgClock,
        Scheme::PgLru,
        Scheme::PgCflru,
        Scheme::PgLruWsr,
        Scheme::AceClock,
        Scheme::AceLru,
        Scheme::AceCflru,
        Scheme::AceLruWsr,
    ];

    /// Every preset.
    #[must_use]
    pub fn presets() -> Vec<Scheme> {
        Scheme::ALL
            .iter()
            .chain(Scheme::POSTGRES)
            .copied()
            .collect()
    }

    /// The scheme's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Vanilla => "vanilla",
            Scheme::VanillaDefault => "vanilla-default",
            Scheme::Cflru => "cflru",
            Scheme::War => "war",
            Scheme::Rw => "rw",
            Scheme::LruCBasic => "lru-c-basic",
            Scheme::LruCDbw => "lru-c-dbw",
            Scheme::LruC => "lru-c",
            Scheme::PgClock => "pg-clock",
            Scheme::PgLru => "pg-lru",
            Scheme::PgCflru => "pg-cflru",
            Scheme::PgLruWsr => "pg-lru-wsr",
            Scheme::AceClock => "ace-clock",
            Scheme::AceLru => "ace-lru",
            Scheme::AceCflru => "ace-cflru",
            Scheme::AceLruWsr => "ace-lru-wsr",
        }
    }

    /// What the preset is, in one line (for `flashbuf schemes`).
    #[must_use]
    pub fn description(self) -> &'static str {
        match self {
            Scheme::Vanilla => "InnoDB (MySQL 5.7) tuned for SSD: the papers' Vanilla",
            Scheme::VanillaDefault => "InnoDB with its defaults (io_capacity 200, neighbours)",
            Scheme::Cflru => "InnoDB with the scan depth at the CF-LRU window (LRU-C paper)",
            Scheme::War => "write-after-read: read stalls copy to a temporary write buffer",
            Scheme::Rw => "a read stall sends the fused read-write command",
            Scheme::LruCBasic => "LRU-C pointer, fixed batches of lru_scan_depth",
            Scheme::LruCDbw => "LRU-C with dynamic batch write of the dirty region",
            Scheme::LruC => "LRU-C with dynamic batches and the LRU-M / LRU-D split",
            Scheme::PgClock => "PostgreSQL 11: Clock Sweep, backend writes, bgwriter",
            Scheme::PgLru => "PostgreSQL with LRU replacement",
            Scheme::PgCflru => "PostgreSQL with CFLRU replacement",
            Scheme::PgLruWsr => "PostgreSQL with LRU-WSR replacement",
            Scheme::AceClock => "ACE over Clock Sweep (pg-clock+ace)",
            Scheme::AceLru => "ACE over LRU (pg-lru+ace)",
            Scheme::AceCflru => "ACE over CFLRU (pg-cflru+ace)",
            Scheme::AceLruWsr => "ACE over LRU-WSR (pg-lru-wsr+ace)",
        }
    }

    /// Parses a preset name.
    ///
    /// # Errors
    /// [`Error::Config`] listing the valid names.
    pub fn from_name(name: &str) -> Result<Scheme> {
        let name = name.trim();
        Scheme::presets()
            .into_iter()
            .find(|scheme| scheme.name() == name)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown scheme `{name}`; valid presets: {} (or a composition: \
                     PRESET+PART, see `flashbuf schemes`)",
                    Scheme::names().join(", ")
                ))
            })
    }

    /// Parses a comma-separated list of scheme names (presets only).
    ///
    /// # Errors
    /// [`Error::Config`] for an unknown name or an empty list.
    pub fn parse_list(list: &str) -> Result<Vec<Scheme>> {
        let schemes = list
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(Scheme::from_name)
            .collect::<Result<Vec<_>>>()?;
        if schemes.is_empty() {
            return Err(Error::Config(format!(
                "no scheme given; valid schemes: {}",
                Scheme::names().join(", ")
            )));
        }
        Ok(schemes)
    }

    /// Every preset name.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        Scheme::presets().into_iter().map(Scheme::name).collect()
    }

    /// The preset's composition.
    #[must_use]
    pub fn composition(self) -> Composition {
        let innodb = |miss, writeback| Composition {
            name: self.name().to_string(),
            order: OrderKind::LruMidpoint,
            miss,
            writeback,
            rate: RateKind::Fixed,
            prefetch: PrefetchKind::None,
            split_mutex: false,
            deep_scan: false,
            innodb_defaults: false,
            rw_unsynced_victim: false,
            backoff: false,
            engine: HostEngine::Innodb,
        };
        let postgres = |order, miss| Composition {
            order,
            miss,
            writeback: WritebackKind::Postgres,
            engine: HostEngine::Postgres,
            ..innodb(MissKind::Pg, WritebackKind::Postgres)
        };
        match self {
            Scheme::Vanilla => innodb(MissKind::Raw, WritebackKind::InnodbTail),
            Scheme::VanillaDefault => Composition {
                innodb_defaults: true,
                ..innodb(MissKind::Raw, WritebackKind::InnodbTail)
            },
            Scheme::Cflru => Composition {
                deep_scan: true,
                ..innodb(MissKind::Raw, WritebackKind::InnodbTail)
            },
            Scheme::War => innodb(MissKind::War, WritebackKind::InnodbTail),
            Scheme::Rw => innodb(MissKind::Rw, WritebackKind::InnodbTail),
            Scheme::LruCBasic => innodb(MissKind::LruC, WritebackKind::LruCFixed),
            Scheme::LruCDbw => innodb(MissKind::LruC, WritebackKind::LruCDynamic),
            Scheme::LruC => Composition {
                split_mutex: true,
                ..innodb(MissKind::LruC, WritebackKind::LruCDynamic)
            },
            Scheme::PgClock => postgres(OrderKind::Clock, MissKind::Pg),
            Scheme::PgLru => postgres(OrderKind::Lru, MissKind::Pg),
            Scheme::PgCflru => postgres(OrderKind::Cflru, MissKind::Pg),
            Scheme::PgLruWsr => postgres(OrderKind::LruWsr, MissKind::Pg),
            Scheme::AceClock => postgres(OrderKind::Clock, MissKind::Ace),
            Scheme::AceLru => postgres(OrderKind::Lru, MissKind::Ace),
            Scheme::AceCflru => postgres(OrderKind::Cflru, MissKind::Ace),
            Scheme::AceLruWsr => postgres(OrderKind::LruWsr, MissKind::Ace),
        }
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Scheme {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Scheme::from_name(s)
    }
}

/// A point of the design space: one part per decision.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[allow(clippy::struct_excessive_bools)] // independent flags of the presets' decisions
pub struct Composition {
    /// The text it was parsed from, canonical (`lru-c`, `pg-clock+ace`).
    pub name: String,
    /// Replacement order.
    pub order: OrderKind,
    /// Miss path.
    pub miss: MissKind,
    /// Background write-back.
    pub writeback: WritebackKind,
    /// Flush-rate controller (InnoDB page cleaner only).
    pub rate: RateKind,
    /// Read-ahead.
    pub prefetch: PrefetchKind,
    /// LRU-C's LRU-M / LRU-D split.
    pub split_mutex: bool,
    /// The InnoDB-emulated CF-LRU: the miss scans its window.
    pub deep_scan: bool,
    /// InnoDB's default knobs instead of the SSD-tuned ones (vanilla-default).
    pub innodb_defaults: bool,
    /// RW: the fused command's victim is written by the command only, without a doublewrite
    /// copy or a sync (the RW paper's MySQL; part `unsynced-victim`).
    pub rw_unsynced_victim: bool,
    /// RAW: a query thread that finds the free list empty never flushes and backs off
    /// (Percona Server 5.6's `innodb_empty_free_list_algorithm = backoff`, its default from
    /// 5.6.13; part `backoff`), whatever the pool config's `empty_free_list` says.
    pub backoff: bool,
    /// The host engine imitated.
    pub engine: HostEngine,
}

/// The error for scheme `name` given twice in `list`: by `earlier` and again by `item` (a
/// group such as `all` names several schemes).
fn duplicate_message(list: &str, name: &str, earlier: &str, item: &str) -> String {
    let via = |given: &str| {
        if given == name {
            format!("`{given}`")
        } else {
            format!("`{given}` (which includes it or makes the same decisions)")
        }
    };
    if earlier == item {
        return format!("`{list}`: scheme `{name}` is given twice; each scheme runs once");
    }
    format!(
        "`{list}`: scheme `{name}` is given twice, by {} and by {}; each scheme runs once",
        via(earlier),
        via(item)
    )
}

/// Every part name accepted after `+`, with the decision it replaces.
pub const PARTS: &[(&str, &str)] = &[
    (
        "lru-midpoint",
        "replacement order: InnoDB's LRU with midpoint insertion",
    ),
    ("lru", "replacement order: LRU"),
    (
        "clock",
        "replacement order: Clock Sweep (usage count up to 5)",
    ),
    (
        "cflru",
        "replacement order: clean-first LRU (window cflru_window_pct)",
    ),
    (
        "lru-wsr",
        "replacement order: LRU with write sequence reordering",
    ),
    ("raw", "miss path: InnoDB's scan + single-page flush"),
    (
        "lru-c",
        "miss path: LRU-C pointer (with its dirty-region flusher and the mutex split)",
    ),
    ("war", "miss path: WAR's temporary write buffer"),
    ("rw", "miss path: the fused read-write command"),
    ("pg", "miss path: PostgreSQL's backend write"),
    ("ace", "miss path: ACE's concurrent write-back of n_w pages"),
    (
        "fixed",
        "flush rate: MySQL's per-second P_scan and adaptive P_io",
    ),
    (
        "seq",
        "read-ahead: sequential streams (prefetch_trigger misses, then prefetch_pages pages)",
    ),
    (
        "history",
        "read-ahead: history-based, up to 3 weighted successors per page",
    ),
    (
        "unsynced-victim",
        "RW: the fused command alone writes its victim, no doublewrite copy, no fsync (the RW \
         paper's MySQL)",
    ),
    (
        "backoff",
        "miss path step 4: never a single-page flush; back off on an empty free list (Percona \
         Server 5.6's default innodb_empty_free_list_algorithm)",
    ),
    (
        "percona",
        "flush rate: Percona 5.6's LRU manager (free-list paced) and furious flushing",
    ),
    (
        "self-tuning",
        "flush rate: self-tuning P_scan and P_io (the JISE paper's Algorithm 3)",
    ),
];

impl OrderKind {
    /// The part name that selects it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            OrderKind::LruMidpoint => "lru-midpoint",
            OrderKind::Lru => "lru",
            OrderKind::Clock => "clock",
            OrderKind::Cflru => "cflru",
            OrderKind::LruWsr => "lru-wsr",
        }
    }
}

impl MissKind {
    /// The part name that selects it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            MissKind::Raw => "raw",
            MissKind::LruC => "lru-c",
            MissKind::War => "war",
            MissKind::Rw => "rw",
            MissKind::Pg => "pg",
            MissKind::Ace => "ace",
        }
    }
}

impl WritebackKind {
    /// A short name (for listings; not a part: the miss path brings its write-back).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            WritebackKind::InnodbTail => "innodb-page-cleaner",
            WritebackKind::LruCFixed => "lru-c-fixed-batch",
            WritebackKind::LruCDynamic => "lru-c-dirty-region",
            WritebackKind::Postgres => "pg-bgwriter",
        }
    }
}

impl HostEngine {
    /// A short name (for listings).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            HostEngine::Innodb => "innodb",
            HostEngine::Postgres => "postgres",
        }
    }
}

/// The presets a `+PART` can be appended to (found by parsing `PRESET+PART` for every preset, so
/// the listing cannot disagree with [`Composition::parse`]).
#[must_use]
pub fn part_combines_with(part: &str) -> Vec<Scheme> {
    Scheme::presets()
        .into_iter()
        .filter(|preset| Composition::parse(&format!("{}+{part}", preset.name())).is_ok())
        .collect()
}

impl Composition {
    /// Its decisions in one line: `order=lru-midpoint miss=raw write-back=... engine=innodb`,
    /// plus the flags that are set.
    #[must_use]
    pub fn decisions(&self) -> String {
        let mut out = format!(
            "order={} miss={} write-back={} engine={}",
            self.order.name(),
            self.miss.name(),
            self.writeback.name(),
            self.engine.name()
        );
        if self.writeback != WritebackKind::Postgres {
            let _ = write!(out, " rate={}", self.rate.name());
        }
        match self.prefetch {
            PrefetchKind::None => {}
            PrefetchKind::Sequential => out.push_str(" prefetch=seq"),
            PrefetchKind::History => out.push_str(" prefetch=history"),
        }
        for (set, flag) in [
            (self.split_mutex, " lru-m/lru-d-split"),
            (self.deep_scan, " cf-lru-deep-scan"),
            (self.innodb_defaults, " innodb-default-knobs"),
            (self.rw_unsynced_victim, " rw-unsynced-victim"),
            (self.backoff, " empty-free-list-backoff"),
        ] {
            if set {
                out.push_str(flag);
            }
        }
        out
    }

    /// Parses `PRESET(+PART)*` (see the module docs).
    ///
    /// # Errors
    /// [`Error::Config`] naming the unknown preset or part, or why the combination is invalid.
    pub fn parse(text: &str) -> Result<Composition> {
        let text = text.trim();
        let mut pieces = text.split('+').map(str::trim);
        let base = pieces.next().unwrap_or_default();
        let mut composition = Scheme::from_name(base)?.composition();
        let mut seen: Vec<&str> = Vec::new();
        for part in pieces {
            let decision = apply_part(&mut composition, part)?;
            if seen.contains(&decision) {
                return Err(Error::Config(format!(
                    "scheme `{text}`: two parts for the {decision}; give one"
                )));
            }
            seen.push(decision);
        }
        composition.name = text.to_string();
        composition.validate()?;
        Ok(composition)
    }

    /// Parses a comma-separated list of schemes; `all` is the InnoDB family, `postgres` the
    /// PostgreSQL family and ACE.
    ///
    /// # Errors
    /// As [`Composition::parse`]; an empty list.
    pub fn parse_list(list: &str) -> Result<Vec<Composition>> {
        let mut out: Vec<(Composition, &str)> = Vec::new();
        let items: Vec<&str> = list.split(',').map(str::trim).collect();
        if items.iter().all(|item| item.is_empty()) {
            return Err(Error::Config(format!(
                "no scheme given; valid presets: {}",
                Scheme::names().join(", ")
            )));
        }
        for (index, item) in items.iter().copied().enumerate() {
            if item.is_empty() {
                return Err(Error::Config(format!(
                    "`{list}`: scheme {} of the list is empty (two commas in a row, or one at \
                     an end); name each scheme once",
                    index + 1
                )));
            }
            let expanded: Vec<Composition> = match item {
                "all" => Scheme::ALL.iter().map(|s| s.composition()).collect(),
                "postgres" => Scheme::POSTGRES.iter().map(|s| s.composition()).collect(),
                _ => vec![Composition::parse(item)?],
            };
            for composition in expanded {
                if let Some((_, earlier)) = out
                    .iter()
                    .find(|(seen, _)| seen.same_decisions(&composition))
                {
                    return Err(Error::Config(duplicate_message(
                        list,
                        &composition.name,
                        earlier,
                        item,
                    )));
                }
                out.push((composition, item));
            }
        }
        Ok(out
            .into_iter()
            .map(|(composition, _)| composition)
            .collect())
    }

    /// Whether this scheme reads the pool-config key `key` (`lru_scan_depth`, `ace_n_w` or
    /// `list_scan_ns`; every other key: true). `lru_scan_depth` sizes InnoDB's miss-path scan
    /// (RAW, WAR, RW) and the page cleaner's `P_scan`, except in the InnoDB-emulated CF-LRU,
    /// whose scan is its window; `ace_n_w` is ACE's; `list_scan_ns` prices the InnoDB
    /// family's list scans (not PostgreSQL's clock hand or ACE's evictor).
    #[must_use]
    pub fn reads_pool_key(&self, key: &str) -> bool {
        match key {
            "lru_scan_depth" => {
                !self.deep_scan
                    && (matches!(self.miss, MissKind::Raw | MissKind::War | MissKind::Rw)
                        || self.writeback != WritebackKind::Postgres)
            }
            "ace_n_w" => self.miss == MissKind::Ace,
            // The InnoDB family's list scans (`Core::walk_charged`); PostgreSQL's clock hand
            // and ACE's evictor take no list mutex per page.
            "list_scan_ns" => {
                !matches!(self.miss, MissKind::Pg | MissKind::Ace)
                    || self.writeback != WritebackKind::Postgres
            }
            _ => true,
        }
    }

    /// Whether `other` makes every decision as this one does (whatever their names).
    #[must_use]
    pub fn same_decisions(&self, other: &Composition) -> bool {
        let unnamed = |c: &Composition| Composition {
            name: String::new(),
            ..c.clone()
        };
        unnamed(self) == unnamed(other)
    }

    /// Checks that the parts can work together.
    ///
    /// # Errors
    /// [`Error::Config`] saying why not.
    pub fn validate(&self) -> Result<()> {
        let bad = |why: &str| Err(Error::Config(format!("scheme `{}`: {why}", self.name)));
        let lru_c_flusher = matches!(
            self.writeback,
            WritebackKind::LruCFixed | WritebackKind::LruCDynamic
        );
        if self.miss == MissKind::LruC
            && !matches!(self.order, OrderKind::LruMidpoint | OrderKind::Lru)
        {
            return bad(
                "LRU-C's pointer splits an LRU list into mixed and dirty regions; it needs the \
                 `lru-midpoint` or `lru` order",
            );
        }
        if (self.miss == MissKind::LruC) != lru_c_flusher {
            return bad(
                "the LRU-C pointer and the dirty-region flusher go together (nothing else \
                 writes the dirty region)",
            );
        }
        if self.split_mutex && self.miss != MissKind::LruC {
            return bad("the LRU-M / LRU-D split exists only with the LRU-C pointer");
        }
        if self.rw_unsynced_victim && self.miss != MissKind::Rw {
            return bad(
                "`unsynced-victim` is how the fused RW command writes its victim; it needs the \
                 `rw` miss path",
            );
        }
        if self.backoff && self.miss != MissKind::Raw {
            return bad(
                "`backoff` is what InnoDB's RAW miss path does on an empty free list; it needs the \
                 `raw` miss path",
            );
        }
        if self.deep_scan && self.miss != MissKind::Raw {
            return bad("the InnoDB-emulated CF-LRU deep scan is a RAW miss path setting");
        }
        if self.rate != RateKind::Fixed && self.writeback == WritebackKind::Postgres {
            return bad(
                "flush-rate controllers drive InnoDB's page cleaner; PostgreSQL's bgwriter \
                 paces itself (bgwriter_delay, bgwriter_lru_*)",
            );
        }
        Ok(())
    }
}

/// Applies one `+PART`; returns the decision it replaced.
fn apply_part(composition: &mut Composition, part: &str) -> Result<&'static str> {
    let order = |c: &mut Composition, kind| {
        c.order = kind;
        Ok("replacement order")
    };
    let miss = |c: &mut Composition, kind| {
        c.miss = kind;
        c.deep_scan = false;
        if kind == MissKind::LruC {
            c.writeback = WritebackKind::LruCDynamic;
            c.split_mutex = true;
        } else if matches!(
            c.writeback,
            WritebackKind::LruCFixed | WritebackKind::LruCDynamic
        ) {
            c.writeback = WritebackKind::InnodbTail;
            c.split_mutex = false;
        }
        Ok("miss path")
    };
    match part {
        "lru-midpoint" => order(composition, OrderKind::LruMidpoint),
        "lru" => order(composition, OrderKind::Lru),
        "clock" => order(composition, OrderKind::Clock),
        "cflru" => order(composition, OrderKind::Cflru),
        "lru-wsr" => order(composition, OrderKind::LruWsr),
        "raw" => miss(composition, MissKind::Raw),
        "lru-c" => miss(composition, MissKind::LruC),
        "war" => miss(composition, MissKind::War),
        "rw" => miss(composition, MissKind::Rw),
        "pg" => miss(composition, MissKind::Pg),
        "ace" => miss(composition, MissKind::Ace),
        "seq" => {
            composition.prefetch = PrefetchKind::Sequential;
            Ok("read-ahead")
        }
        "history" => {
            composition.prefetch = PrefetchKind::History;
            Ok("read-ahead")
        }
        "unsynced-victim" => {
            composition.rw_unsynced_victim = true;
            Ok("RW victim protection")
        }
        "backoff" => {
            composition.backoff = true;
            Ok("empty free list")
        }
        "fixed" | "percona" | "self-tuning" => {
            if composition.writeback == WritebackKind::Postgres {
                return Err(Error::Config(format!(
                    "scheme part `{part}`: flush-rate controllers drive InnoDB's page cleaner; \
                     PostgreSQL's bgwriter paces itself (bgwriter_delay, bgwriter_lru_*)"
                )));
            }
            composition.rate = match part {
                "percona" => RateKind::Percona,
                "self-tuning" => RateKind::SelfTuning,
                _ => RateKind::Fixed,
            };
            Ok("flush-rate controller")
        }
        other => Err(Error::Config(format!(
            "unknown scheme part `{other}`; valid parts: {}",
            PARTS
                .iter()
                .map(|(name, _)| *name)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

impl From<Scheme> for Composition {
    fn from(scheme: Scheme) -> Self {
        scheme.composition()
    }
}

impl std::fmt::Display for Composition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl std::str::FromStr for Composition {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Composition::parse(s)
    }
}

impl PartialEq<Scheme> for Composition {
    fn eq(&self, other: &Scheme) -> bool {
        self.name == other.name()
    }
}

impl Serialize for Composition {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name)
    }
}

impl<'de> Deserialize<'de> for Composition {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Composition::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_and_unknown_names_list_valid_ones() {
        for scheme in Scheme::presets() {
            assert_eq!(Scheme::from_name(scheme.name()).ok(), Some(scheme));
            let composition = Composition::parse(scheme.name()).unwrap();
            assert_eq!(composition, scheme.composition());
            composition.validate().unwrap();
        }
        let err = Scheme::from_name("lru-x")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("lru-c-basic"), "{err}");
        assert!(Scheme::parse_list(" , ").is_err());
    }

    #[test]
    fn compositions_replace_parts_and_invalid_ones_say_why() {
        let ace = Composition::parse("pg-clock+ace").unwrap();
        assert_eq!(ace.miss, MissKind::Ace);
        assert_eq!(ace.order, OrderKind::Clock);
        let mut preset = Scheme::AceClock.composition();
        preset.name = ace.name.clone();
        assert_eq!(ace, preset);
        let err = Composition::parse("pg-clock+lru-c")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("needs the `lru-midpoint` or `lru` order"),
            "{err}"
        );
        let err = Composition::parse("lru-c+clock").unwrap_err().to_string();
        assert!(err.contains("LRU list"), "{err}");
        let err = Composition::parse("pg-clock+fixed")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bgwriter"), "{err}");
        let err = Composition::parse("vanilla+lru+clock")
            .unwrap_err()
            .to_string();
        assert!(err.contains("two parts"), "{err}");
        let err = Composition::parse("vanilla+nope").unwrap_err().to_string();
        assert!(err.contains("valid parts"), "{err}");
        // Percona Server's empty-free-list backoff: a RAW miss path setting, shown in the
        // decisions, refused elsewhere.
        let percona = Composition::parse("vanilla+percona+backoff").unwrap();
        assert!(percona.backoff && percona.rate == RateKind::Percona);
        assert!(percona.decisions().contains("empty-free-list-backoff"));
        assert!(!Composition::parse("vanilla+percona").unwrap().backoff);
        for other in ["lru-c+backoff", "war+backoff", "pg-clock+backoff"] {
            let err = Composition::parse(other).unwrap_err().to_string();
            assert!(err.contains("`raw` miss path"), "{other}: {err}");
        }
        let war = Composition::parse("lru-c+war").unwrap();
        assert_eq!(war.writeback, WritebackKind::InnodbTail);
        assert!(!war.split_mutex);
        assert_eq!(Composition::parse_list("all,postgres").unwrap().len(), 16);
        for (list, named) in [
            ("vanilla,vanilla", "`vanilla` is given twice"),
            ("all,lru-c", "`all` (which includes it"),
            ("ace-clock,pg-clock+ace", "makes the same decisions"),
            ("vanilla,,war", "scheme 2 of the list is empty"),
            ("vanilla,", "scheme 2 of the list is empty"),
        ] {
            let err = Composition::parse_list(list).unwrap_err().to_string();
            assert!(err.contains(named), "{list}: {err}");
        }
    }

    #[test]
    fn flush_rate_controllers_compose_with_innodb_and_lru_c_but_not_postgres() {
        for (text, rate) in [
            ("vanilla+percona", RateKind::Percona),
            ("vanilla+self-tuning", RateKind::SelfTuning),
            ("lru-c+self-tuning", RateKind::SelfTuning),
            ("lru-c-basic+percona", RateKind::Percona),
            ("vanilla+fixed", RateKind::Fixed),
        ] {
            let composition = Composition::parse(text).unwrap();
            assert_eq!(composition.rate, rate, "{text}");
            assert_eq!(composition.name, text);
            assert_eq!(rate.name(), text.rsplit('+').next().unwrap());
        }
        let seq = Composition::parse("pg-clock+ace+seq").unwrap();
        assert_eq!(seq.prefetch, PrefetchKind::Sequential);
        assert_eq!(
            Composition::parse("vanilla+history").unwrap().prefetch,
            PrefetchKind::History
        );
        assert!(Composition::parse("vanilla+seq+history").is_err());
        let lru_c = Composition::parse("lru-c+self-tuning").unwrap();
        assert_eq!(lru_c.writeback, WritebackKind::LruCDynamic);
        assert!(lru_c.split_mutex);
        for text in ["pg-clock+self-tuning", "ace-lru+percona"] {
            let err = Composition::parse(text).unwrap_err().to_string();
            assert!(err.contains("bgwriter"), "{text}: {err}");
        }
        let err = Composition::parse("vanilla+percona+self-tuning")
            .unwrap_err()
            .to_string();
        assert!(err.contains("two parts"), "{err}");
        // A later part cannot move a controller onto the bgwriter either.
        let mut moved = Composition::parse("vanilla+self-tuning").unwrap();
        moved.writeback = WritebackKind::Postgres;
        assert!(moved.validate().is_err());
    }
}
