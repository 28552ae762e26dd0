package server

import "context"

// OnStepDownEnd calls ended when s's step-down of the maintenance leader's
// lease returns, resigned or given up. Call it before ServeListeners.
func OnStepDownEnd(s *Server, ended func()) {
	s.leader = stepDownObserver{leaseHolder: s.leader, ended: ended}
}

type stepDownObserver struct {
	leaseHolder
	ended func()
}

func (o stepDownObserver) StepDown(ctx context.Context) error {
	defer o.ended()
	return o.leaseHolder.StepDown(ctx)
}
