package record

// AuditRow is one stored audit entry with what the hash chain keeps of it:
// its id, the SHA-256 of the row before it (Prev) and its own (Hash), both
// lowercase hex; "" for a row written before the chain began (at or
// before the anchor).
type AuditRow struct {
	ID    int64
	Entry AuditEntry
	Prev  string
	Hash  string
}

// AuditAnchor is where a database's audit chain begins and where it has
// got to. The rows written before the chain (a database upgraded from a
// gatehouse without it) are those with an id at most AnchorID, AnchorRows
// of them when the chain began; the first chained row links to the
// anchor's hash (store/auditchain.AnchorHash). HeadID and HeadHash are the
// newest chained row as its append recorded it (HeadID = AnchorID and
// HeadHash "" before any).
type AuditAnchor struct {
	AnchorID   int64
	AnchorRows int64
	HeadID     int64
	HeadHash   string
}
