// Package storetest holds the contract suites every store implementation
// runs: HistoryContract, AuditContract, CursorContract, MemoryContract,
// UsageContract, CheckpointContract and the cluster primitives'
// ScheduleSlotContract, LeaseContract and InstanceContract; TextContract
// writes text holding a NUL and invalid UTF-8 through every write path.
// Approvals and standing allows have theirs in hitl/hitltest. An
// implementation's test calls each suite with a constructor that returns a
// fresh, empty store for every call.
package storetest
