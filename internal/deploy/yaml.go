package deploy

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads a deployment YAML on top of base: keys present in the file
// replace base's values. Every error names file:line:column and the key.
func Load(path string, base Config) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, invalid("deployment: %v", err)
	}
	return Decode(path, data, base)
}

// Decode is Load on bytes already read; name is used in errors. It refuses
// an unknown key (with the nearest known one), a key given twice, a value
// of the wrong type, and a value that is invalid alone (max_num_seqs: 0);
// values that must agree with others are checked by Resolve, once the
// flags have been applied.
func Decode(name string, data []byte, base Config) (Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return base, invalid("%s", yamlSyntax(name, err))
	}
	if len(doc.Content) == 0 {
		return base, nil // empty or only comments
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return base, invalid("%s:%d:%d: want a mapping of deployment keys (see --help), got %s", name, root.Line, root.Column, kindName(root))
	}
	if err := canonicalKeys(name, root); err != nil {
		return base, invalid("%v", err)
	}
	values := map[string]*yaml.Node{}
	byLine := map[int]string{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		values[k.Value], byLine[v.Line] = v, k.Value
	}
	cfg := base
	if err := root.Decode(&cfg); err != nil {
		return base, invalid("%s", typeError(name, err, values, byLine))
	}
	for _, p := range cfg.problems() {
		if v, ok := values[p.key]; ok {
			return base, invalid("%s:%d:%d: key %s: %s", name, v.Line, v.Column, p.key, p.msg)
		}
	}
	return cfg, nil
}

// yamlMessage turns yaml.v3's "yaml: line 3: field x not found in type
// deploy.Config" into "line 3: unknown key x".
func yamlMessage(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	if i := strings.Index(msg, " not found in type"); i >= 0 {
		msg = strings.Replace(msg[:i], "field ", "unknown key ", 1)
	}
	return strings.ReplaceAll(msg, "\n  ", "; ")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "something else"
}

// yamlLineRE finds the "line N" of yaml.v3's messages.
const yamlLineRE = `line (\d+)`

// yamlSyntax turns yaml.v3's "yaml: line 3: mapping values are not allowed
// in this context" into "dep.yaml:3:1: yaml syntax: mapping values ...".
func yamlSyntax(name string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := regexp.MustCompile(`^` + yamlLineRE + `: `).FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s:%s:1: yaml syntax: %s", name, m[1], msg[len(m[0]):])
	}
	return fmt.Sprintf("%s: yaml syntax: %s", name, msg)
}

// typeError locates yaml.v3's type errors ("line 3: cannot unmarshal !!str
// `many` into int") at the value of the key on that line.
func typeError(name string, err error, values map[string]*yaml.Node, byLine map[int]string) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return fmt.Sprintf("%s: %v", name, err)
	}
	msg := te.Errors[0]
	re := regexp.MustCompile(`^` + yamlLineRE + `: cannot unmarshal !!(\w+) ` + "`(.*)`" + ` into (.+)$`)
	m := re.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Sprintf("%s: %s", name, strings.TrimPrefix(msg, "yaml: "))
	}
	line, _ := strconv.Atoi(m[1])
	key := byLine[line]
	v := values[key]
	if v == nil {
		return fmt.Sprintf("%s:%d:1: %s", name, line, msg)
	}
	return fmt.Sprintf("%s:%d:%d: key %s: %q is not %s", name, v.Line, v.Column, key, m[3], typeWord(m[4]))
}

// typeWord names a Go type for a user.
func typeWord(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "time.Duration":
		return "a duration (e.g. 50ms)"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map"):
		return "a mapping"
	}
	return "a " + goType
}
