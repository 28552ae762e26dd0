package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	openai "github.com/sashabaranov/go-openai"
)

// Lookup asks the provider's stored-completions list (GET /chat/completions
// filtered by metadata[router_attempt_id]) whether a completion was stored for
// attemptID. It needs cfg.SupportsLookup (the completion was sent with store=true
// and the attempt id as metadata); otherwise it returns a KindMisconfigured error.
// found=true with a non-nil error means the provider holds a record whose outcome
// is that error (no choices, or filtered).
func (p *OpenAI) Lookup(ctx context.Context, attemptID string) (*Response, bool, error) {
	resp, found, err := p.lookup(ctx, attemptID)
	return resp, found, p.redact.error(err)
}

// lookup is Lookup with the provider's text in its error as it came.
func (p *OpenAI) lookup(ctx context.Context, attemptID string) (*Response, bool, error) {
	if !p.cfg.SupportsLookup {
		e := NewError(p.cfg.Name, KindMisconfigured, "lookup not enabled: set SupportsLookup in the provider config")
		e.Action = ActionStop
		return nil, false, e
	}
	actx, w := WatchCall(ctx, p.cfg.Name, Deadlines{Total: p.cfg.Timeout})
	defer w.Stop()
	q := url.Values{}
	q.Set("metadata["+MetadataAttemptID+"]", attemptID)
	q.Set("limit", "1")
	u := p.root + "/chat/completions?" + q.Encode()
	tctx, trace := withCallTrace(actx, nil)
	hreq, err := http.NewRequestWithContext(tctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, NewError(p.cfg.Name, KindMisconfigured, "lookup request: "+err.Error())
	}
	hreq.Header.Set("Accept", "application/json")
	if p.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	if p.cfg.Organization != "" {
		hreq.Header.Set("OpenAI-Organization", p.cfg.Organization)
	}
	resp, err := p.http.Do(hreq)
	if err != nil {
		return nil, false, p.classify(w, trace, err)
	}
	defer resp.Body.Close()
	// The transport bounds the body to max_response_bytes (limitClient):
	// past it the read fails, response_too_large, rather than the list
	// being cut short and reported as a list that does not decode.
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, false, p.classify(w, trace, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, false, p.classify(w, trace, httpError(resp, body))
	}
	// Only the list asked for is an answer: "no record" fails the attempt and
	// lets its job go on elsewhere, so a 200 that is not a stored-completions
	// list (a proxy's empty object or error body, a single completion) is an
	// error, and the attempt stays unknown.
	var list struct {
		Object string `json:"object"`
		Data   *[]struct {
			openai.ChatCompletionResponse
			Metadata map[string]string `json:"metadata"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, false, p.classify(w, trace, fmt.Errorf("lookup list: %w", err))
	}
	if list.Data == nil || list.Object != "" && list.Object != "list" {
		return nil, false, NewError(p.cfg.Name, KindMalformedResponse,
			"lookup: the answer is not a list of stored completions: "+truncate(string(body)))
	}
	if len(*list.Data) == 0 {
		return nil, false, nil
	}
	c := (*list.Data)[0]
	if id, ok := c.Metadata[MetadataAttemptID]; !ok || id != attemptID {
		// The endpoint ignored the metadata filter: what it lists says
		// nothing about this attempt, neither found nor not found. Every
		// request of an attempt carries its id as metadata, so a record
		// without it (another client's stored completion, a proxy that
		// strips metadata) is not this attempt's either.
		who := "of another attempt (" + truncate(id) + ")"
		if !ok {
			who = "without the attempt id in its metadata"
		}
		return nil, false, NewError(p.cfg.Name, KindMalformedResponse,
			"lookup: the provider listed a completion "+who+": it does not filter stored completions by metadata")
	}
	r, err := p.response(c.ID, c.Model, c.Created, c.Choices, c.Usage)
	if r != nil {
		r.SystemFingerprint = fingerprint(c.SystemFingerprint)
	}
	return r, true, err
}

// httpError builds the error go-openai would have built for an error response.
func httpError(resp *http.Response, body []byte) error {
	var er openai.ErrorResponse
	if err := json.Unmarshal(body, &er); err == nil && er.Error != nil {
		er.Error.HTTPStatus = resp.Status
		er.Error.HTTPStatusCode = resp.StatusCode
		return er.Error
	}
	return &openai.RequestError{HTTPStatus: resp.Status, HTTPStatusCode: resp.StatusCode, Body: body}
}
