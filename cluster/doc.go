// Package cluster is what makes several gatehouse instances on one
// PostgreSQL database act as one bot that does not go down. It is the map
// of that feature; SQLite needs none of it (one process, one file), and
// app wires it only when the store says it is shared (store.Sharer).
//
// In this package:
//   - The durable inbox (inbox.go, Inbox: core.Journal over store.Inbox):
//     a received message is written to the database before the platform
//     is told it arrived; any instance claims it and runs its turn through
//     core.Engine.RunJournaled, one message of a conversation at a time and
//     in order across instances (one that finds its conversation idle is
//     put claimed by its receiver, with a turn free: inbox_put.go; a
//     turn that ends takes the next in the write that marks it done, with
//     no claim of its own: inbox_next.go). A
//     claim is renewed while its turn runs; an instance that dies leaves
//     it to expire after store.lease_ttl, and
//     the next claimer takes it over at the stage the turn had reached
//     (never adding the message twice, never running a tool call again,
//     never sending a reply twice). /cancel and /reset reach a turn held by
//     another instance (store.InboxResetter).
//   - Replies (replies.go): each reply written to the store's outbox before
//     it is sent (Replies, a gateways.Journal), the replies of an instance
//     gone claimed once and sent from the first chunk not yet accepted
//     (Replies.Resume), and a platform's limits per token held by every
//     instance together (Slots, a gateways.SlotReserver over
//     store.SendSlots).
//   - The fence (fence.go, Fence): an instance that cannot renew its
//     heartbeat or its workspace lease for half of store.lease_ttl stops
//     its approved and changing calls (their process groups killed)
//     before the others may take it for dead, mark its runs interrupted
//     or restore the workspace; app feeds it the renewals and guards the
//     calls with it (hitl.Options.Fence, the tool actuator), checkpoint
//     tells it of the run lease.
//   - The members (member.go, Member, a core.StatusReporter): this
//     instance's heartbeat, its name claimed before anything runs
//     (claim.go, ClaimName: a second live process under one name is
//     refused, ErrInstanceInUse; a crashed one's heartbeat is waited
//     out), and /status's lines on the store, the instances alive and
//     the leases held; View (view.go) is the same for bot doctor, and
//     PrefixLeases (leases.go) the store's leases as checkpoint asks for
//     them.
//   - The configurations compared (fingerprint.go): each instance
//     records the fingerprint of the configuration in force (at start,
//     and after a reload: the reloaded keys, the running ones for keys a
//     restart applies) beside its heartbeat, and warns of the keys in
//     which the others alive differ; /status and bot doctor (ConfigDiffs)
//     name them.
//
// Elsewhere (by design):
//   - app: the fingerprint itself (a hash of each top-level key of the
//     configuration, secrets redacted: cluster knows no config), the
//     wiring of the parts above when the store is shared, and the
//     store's probe behind /readyz (a message refused while the database
//     does not answer).
//   - gateways: Shared (the delivery layer's seam for Slots and Replies) and
//     RunUnderLease (a receiver the platform allows once per token, long
//     polling or a websocket session, run by the one instance holding its
//     lease).
//   - hitl: SharedStore (the instance that runs an approved call; the runs
//     of instances gone marked interrupted, once) and ResolutionNotifier (a
//     resolution told to the instance whose gateways sent the request).
//   - checkpoint: the workspace held across instances through the store's
//     leases, so that /undo never restores while another instance changes
//     files; schedule: one run per slot (store.ScheduleSlots).
//   - store: the interfaces (queues.go: SendSlots, Outbox, Inbox; store.go:
//     Leases, Instances, ConfigFingerprints) and store/postgres, which
//     implements them with FOR UPDATE SKIP LOCKED, conditional updates and
//     LISTEN/NOTIFY.
package cluster
