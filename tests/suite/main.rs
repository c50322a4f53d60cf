//! flashbuf's integration tests, linked as one test binary.
//!
//! Each module is one concern's tests (what was one file under `tests/` each); `crash_common`
//! and `wal_common` are the helpers that several of them share. One binary instead of about a
//! hundred: the suite links once, the library's generic code is compiled once for it, and the
//! test harness keeps both cores busy across modules instead of running binaries one after
//! another. Run one module with a filter: `cargo test --release --test suite wal_torn::`.
//!
//! Tests that need a process of their own stay separate binaries beside this one:
//! `lookup_allocations` (a counting global allocator), `file_device` (sets an environment
//! variable that every file device reads), `file_restart_after_kill` (re-executes its own binary
//! as the child it kills), and the shuttle models (`--features shuttle`).

mod crash_common;
mod poll;
mod wal_common;

mod ace_figure6;
mod ace_n_w_from_device_k_w;
mod adaptive_flushing_counts_flush_list;
mod bench_cli_validates_first;
mod bench_harness;
mod bench_image_refused;
mod bench_interrupt_keeps_results;
mod bench_record_workload;
mod bench_repeat_cli;
mod btree_bulk_load;
mod btree_check_cli;
mod btree_concurrent;
mod btree_model;
mod check_recover_cli;
mod check_refuses_bad_files;
mod check_tpcc_conditions;
mod cleaner_cached;
mod cleaner_stops_mid_batch;
mod cli_inputs_checked_first;
mod cli_more_bad_inputs;
mod crash_campaign;
mod datafile_open_validates;
mod datafile_torn_header;
mod db_transactions;
mod doublewrite_failed_sync;
mod doublewrite_syncs_per_file;
mod emulated_device;
mod emulated_lazy_writeback;
mod emulated_sync_price;
mod fault_crash_switch;
mod fault_device;
mod fault_sync_failure_loses_writes;
mod fault_write_faults;
mod file_existing_untouched;
mod file_lock;
mod flushrate_percona;
mod flushrate_self_tuning;
mod ideal_device;
mod image_bind_interrupted;
mod image_file;
mod linkbench_counts_match_links;
mod linkbench_load_shape;
mod list_scan_cost;
mod listings_match_parsers;
mod lock_stress;
mod mysql56_miss_loop;
mod order_policies;
mod pool_stress;
mod prefetch_reads_ahead;
mod probe_corun;
mod probe_fsync;
mod probe_parameters;
mod probe_steady_state;
mod read_stall_accounting;
mod recovery_crash_sweep;
mod report_html_self_contained;
mod reproduce_list_and_needs;
mod reproduce_quick_end_to_end;
mod reproduce_registry;
mod reproduce_rescore;
mod reproduce_reuse;
mod reproduce_split_and_merge;
mod reproduce_verdicts;
mod runtime_corruption;
mod rw_unsynced_victim;
mod sweep_interrupt_keeps_points;
mod sweep_two_parameters;
mod sweep_writes_every_point;
mod tpcc_bound_clients;
mod tpcc_check_detects_violations;
mod tpcc_consistency_after_run;
mod tpcc_crash;
mod tpcc_load_cardinalities;
mod tpcc_measurements;
mod tpcc_mix_parser;
mod tpcc_nurand_constants;
mod txn_crash;
mod txn_delete_rollback_after_failed_merge;
mod txn_failed_statement_aborts;
mod txn_isolation;
mod txn_patched_update;
mod txn_rollback_splits;
mod txn_tpcc;
mod txn_transact;
mod txn_transfers_64_threads;
mod wal_checkpoint;
mod wal_concurrent;
mod wal_corruption;
mod wal_log_bytes;
mod wal_midlog_corruption;
mod wal_old_version;
mod wal_open_never_formats;
mod wal_poison;
mod wal_roundtrip;
mod wal_torn;
mod wal_torn_last_flush;
mod wal_truncated_device;
mod ycsb_distributions;
mod ycsb_load_size;
mod ycsb_workloads;
