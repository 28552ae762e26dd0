package store

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Price is a target's price in USD per million tokens. An attempt is created
// with its target's price as the creating process configures it (FirstAttempt,
// NewAttempt), stored on the attempt row, so the attempt keeps the price it was
// made at and the database derives its cost_usd from the usage the provider
// reported, when the attempt is read (the function cost_usd of
// migrations/0011_attempt_cost_computed.sql, read as a.cost_usd).
type Price struct {
	InputPerMTok, OutputPerMTok float64
}

// parts is the price as the attempt row's two nullable columns.
func (p *Price) parts() (in, out *float64) {
	if p == nil {
		return nil, nil
	}
	return &p.InputPerMTok, &p.OutputPerMTok
}

// sumCosts sets the job's cost_usd (every attempt) and lost_cost_usd (every
// attempt that did not win) from its attempts' costs, summed exactly as the
// decimals the attempts show (costSum): attempts of 0.1 and 0.2 make 0.3, not
// the float64 sum 0.30000000000000004, so a job's costs reconcile with its
// attempts'.
//
// A total is left out rather than partial: cost_usd when an attempt with
// usage has no cost (its target has no price: unpricedUsage), as when no
// attempt has one; lost_cost_usd when such an attempt did not win. A route
// mixing priced and unpriced targets would otherwise show the cost of its
// priced attempts alone as the job's — an unpriced winner read as free.
// An attempt without usage (never sent, nothing reported or estimated)
// costs nothing whatever its price, and leaves the totals whole.
func (j *Job) sumCosts() {
	var total, lost costSum
	for _, a := range j.Attempts {
		if a.CostUSD == nil {
			continue
		}
		total.add(*a.CostUSD)
		if a.State != AttemptWon {
			lost.add(*a.CostUSD)
		}
	}
	if total.n == 0 {
		j.CostUSD, j.LostCostUSD = nil, nil
		return
	}
	whole, lostWhole := true, true
	for _, a := range j.Attempts {
		if a.CostUSD == nil && unpricedUsage(a.Usage) {
			whole = false
			if a.State != AttemptWon {
				lostWhole = false
			}
		}
	}
	j.CostUSD, j.LostCostUSD = nil, nil
	if whole {
		t := total.value()
		j.CostUSD = &t
	}
	if lostWhole {
		l := lost.value()
		j.LostCostUSD = &l
	}
}

// unpricedUsage says whether an attempt without a cost has usage that a
// price would have made a cost: the condition of the database's cost_usd
// (migrations/0011_attempt_cost_computed.sql) but for the price — a usage
// object with prompt_tokens or completion_tokens above 0 (a number, or a
// string holding one, as the database's cast reads it).
func unpricedUsage(usage []byte) bool {
	if len(usage) == 0 {
		return false
	}
	var u struct {
		Prompt     json.RawMessage `json:"prompt_tokens"`
		Completion json.RawMessage `json:"completion_tokens"`
	}
	if json.Unmarshal(usage, &u) != nil {
		return false // not an object (null included): no cost with any price
	}
	return positiveCount(u.Prompt) || positiveCount(u.Completion)
}

// positiveCount says whether a usage member's value is a number above 0.
func positiveCount(v json.RawMessage) bool {
	f, err := strconv.ParseFloat(strings.Trim(string(v), `"`), 64)
	return err == nil && f > 0
}

// costSum adds costs as the decimals they are shown as, exactly, and gives
// the float64 nearest to that decimal sum. An attempt's cost_usd is the
// database's numeric read as a float64 (the nearest one) and written, in the
// job resource and webhook bodies, as the shortest decimal that reads back as
// that float64 (jsonenc.AppendFloat): that decimal is the numeric itself for
// any cost of up to 15 significant digits. Each term is taken as that
// shortest decimal (strconv's 'e', -1) into a big.Rat, the sum is exact, and
// only the result is rounded, once: so the job's cost, written the same way,
// is the exact sum of the costs its attempts show whenever that sum has 15
// significant digits or fewer; adding the float64s rounds at every step
// instead (0.1 + 0.2 = 0.30000000000000004). One term needs no arithmetic: the
// success path's job of one attempt allocates nothing here.
type costSum struct {
	n     int
	first float64
	sum   big.Rat
	// inexact: a term is not a finite number (a cost the database cannot
	// have; guarded all the same): the sum is the float64 sum, f.
	inexact bool
	f       float64
}

func (s *costSum) add(x float64) {
	s.n++
	s.f += x
	switch {
	case math.IsInf(x, 0) || math.IsNaN(x):
		s.inexact = true
	case s.n == 1:
		s.first = x
	default:
		if s.n == 2 {
			s.addRat(s.first)
		}
		s.addRat(x)
	}
}

// addRat adds x, as its shortest decimal, to the exact sum.
func (s *costSum) addRat(x float64) {
	var r big.Rat
	if _, ok := r.SetString(strconv.FormatFloat(x, 'e', -1, 64)); !ok {
		s.inexact = true // unreachable: a finite float64 always formats as a decimal
		return
	}
	s.sum.Add(&s.sum, &r)
}

// value is the sum: 0 without terms, the term itself with one.
func (s *costSum) value() float64 {
	switch {
	case s.n == 0:
		return 0
	case s.n == 1 || s.inexact:
		return s.f
	}
	v, _ := s.sum.Float64()
	return v
}
