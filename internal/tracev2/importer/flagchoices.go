package importer

// FlagChoices are the values shell completion offers for --from: the
// formats, by name.
func FlagChoices() map[string][]string {
	var formats []string
	for _, f := range Formats() {
		formats = append(formats, string(f))
	}
	return map[string][]string{"from": formats}
}
