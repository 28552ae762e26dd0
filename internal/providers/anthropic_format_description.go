package providers

// formatDescriptionInstruction is the system text that carries a
// json_schema response format's description to Anthropic, whose
// output_config.format has only the schema: OpenAI gives the model the
// description ("what the response format is for"), and a caller who wrote
// one means the model to read it. "" when there is none. The format's name
// ("response" when none was given) says which format it speaks of.
func formatDescriptionInstruction(rf *ResponseFormat) string {
	if rf == nil || rf.Type != "json_schema" || rf.Description == "" {
		return ""
	}
	name := rf.Name
	if name == "" {
		name = "response"
	}
	return "The JSON response format \"" + name + "\": " + rf.Description
}
