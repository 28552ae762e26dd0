package maintenance

import "time"

// SetClock makes e read the local clock from now instead of time.Now.
func (e *Elector) SetClock(now func() time.Time) { e.now = now }
