package layout

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestREADMEJobRunsTheImage: the README's Kubernetes Job names the image
// `make image` builds (servesim:VERSION) and runs a binary of it directly,
// since the image has no shell.
func TestREADMEJobRunsTheImage(t *testing.T) {
	app, err := os.ReadFile("../../internal/cli/app.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const Version = "([^"]+)"`).FindSubmatch(app)
	if m == nil {
		t.Fatal("no Version in internal/cli/app.go")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n(apiVersion: batch/v1\nkind: Job\n.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README has no Kubernetes Job")
	}
	var job struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Image   string   `yaml:"image"`
						Command []string `yaml:"command"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(block[1], &job); err != nil {
		t.Fatalf("README's Job: %v", err)
	}
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("Job has %d containers, want 1", len(cs))
	}
	if want := "servesim:" + string(m[1]); cs[0].Image != want {
		t.Errorf("Job image %q, want %q (what make image builds)", cs[0].Image, want)
	}
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "IMAGE   ?= servesim:$(VERSION)") {
		t.Error("Makefile no longer names the image servesim:$(VERSION)")
	}
	if len(cs[0].Command) == 0 || !regexp.MustCompile(`^(observe|replay|calibrate|run)$`).MatchString(cs[0].Command[0]) {
		t.Errorf("Job command %q: the image has no shell, it must start with one of the four binaries", cs[0].Command)
	}
}
