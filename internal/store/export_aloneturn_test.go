package store

import "context"

// SetOnAloneTurnWait installs a hook run as a caller finds every alone turn
// taken and starts waiting for one (aloneTurns); nil removes it.
func (s *Store) SetOnAloneTurnWait(f func()) { s.alone.onWait = f }

// AloneTurns is how many items the store lets run alone at once.
func (s *Store) AloneTurns() int { return cap(s.alone.slots) }

// PathBatchToldWins is PathBatch that also reports, for each batched
// transaction sent after the first (the batch's own), how many of the
// batch's wins had been told their outcome when it was sent.
func (s *Store) PathBatchToldWins(ctx context.Context, njs []NewJob, cs []Completion) (told []int, claimErrs []error, winErrs []error) {
	var batch []*pathCommit
	var claims []*claimRequest
	var wins []*winRequest
	for _, nj := range njs {
		if len(nj.Params) == 0 {
			nj.Params = []byte("{}")
		}
		c := newClaim(nj)
		claims = append(claims, c)
		batch = append(batch, &pathCommit{claim: c})
	}
	for _, c := range cs {
		w := &winRequest{c: c, done: make(chan struct{})}
		wins = append(wins, w)
		batch = append(batch, &pathCommit{win: w})
	}
	sent := 0
	s.onBatched = func(int) {
		if sent++; sent == 1 {
			return
		}
		n := 0
		for _, w := range wins {
			select {
			case <-w.done:
				n++
			default:
			}
		}
		told = append(told, n)
	}
	defer func() { s.onBatched = nil }()
	s.execPathCommits(ctx, batch)
	for _, c := range claims {
		_, _, err := s.claimOutcome(ctx, c)
		claimErrs = append(claimErrs, err)
	}
	for _, w := range wins {
		winErrs = append(winErrs, w.err)
	}
	return told, claimErrs, winErrs
}
