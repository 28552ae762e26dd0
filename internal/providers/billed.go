package providers

import (
	"strings"

	"github.com/routerhq/router/internal/jsontext"
)

// billed marks e as the failure of a complete answer the provider billed
// although the router cannot use it (a refusal, a content filter, a paused
// turn, an answer without choices), and returns e. The answer's usage, id and
// model go with the error, so that the attempt records the tokens it was
// charged for, as it does for an answer that fails the contract (`invalid`):
// without them the attempt had no cost, and the job's lost_cost_usd and
// router_cost_usd_total under-counted what failing over really cost.
//
// A usage with no tokens at all stays nil: the attempt then has no usage, as
// a failure without an answer has none. The id and model are made storable
// here (text columns refuse NUL and invalid UTF-8).
func (e *Error) billed(u Usage, id, model string) *Error {
	// A complete answer came: the outcome is known, whatever deadline
	// passes meanwhile (the race labels a deadline's failure unknown only
	// when nothing was received).
	e.Received = true
	if u != (Usage{}) {
		e.Usage = &u
	}
	e.ResponseID, e.ResponseModel = jsontext.SanitizeString(id), jsontext.SanitizeString(model)
	return e
}

// withAnswer gives the *Error in err's chain, when it is the failure of a
// complete answer the provider billed (billed marks it Received), the
// answer's text (answer, called only then): see Error.Answer. Each adapter
// calls it on what its finish returned, streamed or not.
func withAnswer(err error, answer func() string) {
	if pe, ok := AsError(err); ok && pe.Received && pe.Answer == "" {
		pe.Answer = answer()
	}
}

// answerText joins the texts of an answer the provider generated — texts
// (its reasoning, content, refusal) and the name and arguments of each of
// its n tool calls (call(i)) — in the order a stream's partial joins them,
// for Error.Answer.
func answerText(n int, call func(i int) (name, args string), texts ...string) string {
	var b strings.Builder
	for _, s := range texts {
		b.WriteString(s)
	}
	for i := range n {
		name, args := call(i)
		b.WriteString(name)
		b.WriteString(args)
	}
	return b.String()
}
