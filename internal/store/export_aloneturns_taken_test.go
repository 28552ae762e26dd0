package store

// AloneTurnsTaken is how many of the claims' alone turns are taken now.
func (s *Store) AloneTurnsTaken() int { return len(s.alone.slots) }
