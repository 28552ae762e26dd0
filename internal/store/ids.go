package store

import "github.com/google/uuid"

// newID is the id of a new job or attempt: a version 7 UUID (RFC 9562), whose
// first 48 bits are the Unix time in milliseconds. Ids made one after another
// sort one after another, so the primary keys and every index that leads with a
// job or attempt id take new entries at their right edge — pages that are
// already in memory — instead of at a random leaf of the whole index, and split
// as append-only indexes do. The price: an id tells when it was made, to the
// millisecond (docs/api.md).
func newID() uuid.UUID { return uuid.Must(uuid.NewV7()) }
