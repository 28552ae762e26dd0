package store

// checkJobID is the gate of every store function that takes a job id from a
// caller: only the canonical form the router hands out — 36 characters,
// lowercase hex in groups of 8-4-4-4-12 separated by hyphens, as
// PostgreSQL prints a uuid — can name a job. Anything else (not a UUID at
// all, or another spelling of one: urn:uuid:…, {…}, no hyphens, uppercase)
// names no job and is ErrNotFound, before any statement is sent: PostgreSQL
// would reject most of them as invalid input for type uuid, and the router
// compares ids as strings elsewhere (its executor, its listener), where
// another spelling of an id would not be the same job.
func checkJobID(id string) error {
	if !canonicalUUID(id) {
		return ErrNotFound
	}
	return nil
}

// canonicalUUID reports whether s is a UUID in canonical form (see
// checkJobID).
func canonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// IsJobID reports whether s is in the form the router gives job ids (see
// checkJobID): the API tells a caller who sent another form so, rather than
// that no such job exists.
func IsJobID(s string) bool { return canonicalUUID(s) }
