// Package archtest holds no code: its test keeps the import graph pointing
// downwards as ARCHITECTURE.md and DESIGN.md describe it (gateways import
// neither hitl nor store, store packages do not import hitl, core imports no
// gateway, hitl or store, only the store table names a store driver).
package archtest
