package api

import (
	"net/http"
	"slices"
)

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
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := make([]model, len(names))
	for i, n := range names {
		data[i] = model{ID: n, Object: "model", OwnedBy: "router"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
