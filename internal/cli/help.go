package cli

import (
	"reflect"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/flagspec"
)

// optionsKey is where Run keeps the OPTIONS listing for helpTemplate.
const optionsKey = "options"

// helpTemplate is urfave/cli's help with the options listed by
// optionsHelp: urfave's own listing with categories sorts the headings and
// the flags in each alphabetically, which puts the common ones anywhere.
func helpTemplate() string {
	t := ucli.AppHelpTemplate
	i := strings.Index(t, "{{if .VisibleFlagCategories}}")
	j := strings.Index(t, "{{if .Copyright}}")
	if i < 0 || j < i {
		return t // another urfave/cli: its own listing
	}
	return t[:i] + `{{if .VisibleFlags}}

GLOBAL OPTIONS:{{index .Metadata "` + optionsKey + `"}}{{end}}` + t[j:]
}

// optionsHelp lists flags for --help: the command's own flags first (those
// with no heading), then one heading per category in flagspec.Categories'
// order (others after them), each flag in the order the command gives it.
// urfave's --help and --version end the list.
func optionsHelp(flags []ucli.Flag) string {
	groups := map[string][]ucli.Flag{}
	order := []string{""}
	general := []ucli.Flag{ucli.HelpFlag, ucli.VersionFlag}
	for i, f := range append(slices.Clone(flags), general...) {
		if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		cat := ""
		if c, ok := f.(ucli.CategorizableFlag); ok {
			cat = c.GetCategory()
		}
		if i >= len(flags) {
			cat = flagspec.CatGeneral // urfave's own, whose Category is not ours to set
		}
		if _, ok := groups[cat]; !ok && cat != "" {
			order = append(order, cat)
		}
		groups[cat] = append(groups[cat], f)
	}
	known := flagspec.Categories()
	rank := func(cat string) int {
		if i := slices.Index(known, cat); i >= 0 || cat == "" {
			return i // "" is -1: first
		}
		return len(known)
	}
	slices.SortStableFunc(order, func(a, b string) int { return rank(a) - rank(b) })
	var b strings.Builder
	for _, cat := range order {
		if cat != "" {
			b.WriteString("\n\n   " + cat + "\n")
		}
		for _, f := range groups[cat] {
			b.WriteString("\n   " + strings.ReplaceAll(f.String(), "\n", "\n      "))
		}
	}
	return b.String()
}

// InCategory puts flags under a --help heading (every urfave/cli flag type
// has a Category field) and returns them.
func InCategory(cat string, flags ...ucli.Flag) []ucli.Flag {
	for _, f := range flags {
		v := reflect.ValueOf(f)
		if v.Kind() != reflect.Pointer {
			continue
		}
		if field := v.Elem().FieldByName("Category"); field.IsValid() && field.CanSet() && field.Kind() == reflect.String {
			field.SetString(cat)
		}
	}
	return flags
}

// Categorised puts each flag named in headings under its heading (a
// heading maps to the names of its flags) and returns flags in their
// order: a long list is grouped without being reordered.
func Categorised(headings map[string][]string, flags []ucli.Flag) []ucli.Flag {
	for cat, names := range headings {
		for _, f := range flags {
			if slices.Contains(names, f.Names()[0]) {
				InCategory(cat, f)
			}
		}
	}
	return flags
}
