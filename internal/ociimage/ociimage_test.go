package ociimage

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

func testSpec() Spec {
	return Spec{Name: "servesim:0.1.0", OS: "linux", Arch: "amd64", Env: []string{"PATH=/usr/local/bin"},
		Cmd: []string{"run", "--help"}, Dirs: []string{"/tmp"}, Created: time.Unix(1700000000, 0)}
}

func testFiles() []File {
	var fs []File
	for _, n := range []string{"run", "observe", "replay", "calibrate"} {
		fs = append(fs, File{Path: "/usr/local/bin/" + n, Mode: 0o755, Data: []byte("binary " + n)})
	}
	return fs
}

// TestWriteRead: what Write puts in the image, Read finds again, with
// every digest checked, and the same files give the same bytes.
func TestWriteRead(t *testing.T) {
	var a, b bytes.Buffer
	if err := Write(&a, testSpec(), testFiles()); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, testSpec(), testFiles()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of the same image differ")
	}
	img, err := Read(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if img.Name != "servesim:0.1.0" || len(img.RepoTags) != 1 || img.RepoTags[0] != "servesim:0.1.0" {
		t.Errorf("name %q, tags %v; want servesim:0.1.0", img.Name, img.RepoTags)
	}
	if img.OS != "linux" || img.Arch != "amd64" || strings.Join(img.Env, " ") != "PATH=/usr/local/bin" {
		t.Errorf("os %s arch %s env %v", img.OS, img.Arch, img.Env)
	}
	var got []string
	for _, f := range img.Files {
		got = append(got, f.Path)
		if f.Mode != 0o755 || string(f.Data) != "binary "+f.Path[len("/usr/local/bin/"):] {
			t.Errorf("%s: mode %o, data %q", f.Path, f.Mode, f.Data)
		}
	}
	if want := "/usr/local/bin/calibrate /usr/local/bin/observe /usr/local/bin/replay /usr/local/bin/run"; strings.Join(got, " ") != want {
		t.Errorf("files %v, want %s", got, want)
	}
	// The top level is an OCI layout and a docker-load archive at once.
	names := map[string]bool{}
	tr := tar.NewReader(bytes.NewReader(a.Bytes()))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names[h.Name] = true
	}
	for _, n := range []string{"oci-layout", "index.json", "manifest.json"} {
		if !names[n] {
			t.Errorf("tarball lacks %s", n)
		}
	}
}

// TestReadRefusesTampering: a blob changed after writing is caught.
func TestReadRefusesTampering(t *testing.T) {
	var a bytes.Buffer
	if err := Write(&a, testSpec(), testFiles()); err != nil {
		t.Fatal(err)
	}
	raw := a.Bytes()
	i := bytes.Index(raw, []byte(`"architecture":"amd64"`))
	if i < 0 {
		t.Fatal("config not found in the tarball")
	}
	copy(raw[i:], `"architecture":"arm64"`)
	if _, err := Read(bytes.NewReader(raw)); err == nil || !strings.Contains(err.Error(), "does not match its digest") {
		t.Errorf("Read of a changed config: %v, want a digest mismatch", err)
	}
}

func TestWriteRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		name  string
		spec  Spec
		files []File
	}{
		{"no tag", Spec{Name: "servesim"}, testFiles()},
		{"relative path", testSpec(), []File{{Path: "usr/bin/run"}}},
		{"twice", testSpec(), []File{{Path: "/run"}, {Path: "/run"}}},
	} {
		if err := Write(io.Discard, c.spec, c.files); err == nil {
			t.Errorf("%s: Write accepted it", c.name)
		}
	}
}
