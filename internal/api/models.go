package api

import (
	"fmt"
	"net/http"
	"slices"

	rfcproblem "github.com/routerhq/router/internal/problem"
)

// model is one entry of GET /v1/models, as OpenAI writes it.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// listModels is GET /v1/models: the routes, as OpenAI models.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	names := make([]string, 0, len(s.Routes))
	for name := range s.Routes {
		names = append(names, name)
	}
	for name := range s.Models {
		names = append(names, name)
	}
	slices.Sort(names)
	data := make([]model, len(names))
	for i, n := range names {
		data[i] = model{ID: n, Object: "model", OwnedBy: "router"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// getModel is GET /v1/models/{model} (the SDKs' models.retrieve): the route
// or model alias as one OpenAI model, or OpenAI's 404 model_not_found. A
// model's name may hold slashes ("org/model"), so the path's rest is the name.
func (s *Server) getModel(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("model")
	if _, alias := s.Models[name]; !s.Routes[name] && !alias {
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
			fmt.Sprintf("the model %q does not exist on this router: GET /v1/models lists the routes and models it serves", rfcproblem.Clip(name)))
		return
	}
	writeJSON(w, http.StatusOK, model{ID: name, Object: "model", OwnedBy: "router"})
}
