//! Write-ahead redo log, checkpoints and recovery (issue 5). Being written.
