// Command image builds and checks the suite's container image without a
// daemon or a registry (internal/ociimage):
//
//	go run ./tools/image build -o IMAGE.tar -name servesim:TAG BIN...
//	go run ./tools/image check IMAGE.tar -want observe,replay,calibrate,run -exec 'run --version'
//
// build puts each BIN in /usr/local/bin of a single-layer image from no
// base (the binaries are static), with PATH set and a writable /tmp. check
// reads the tarball as a runtime would (digests, diff id, both manifests),
// requires every -want binary in /usr/local/bin, and runs -exec with the
// binary taken out of the image: the check for a machine without a
// container runtime. make image and .ci/run call it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"servesim/internal/ociimage"
)

const binDir = "/usr/local/bin/"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: image build|check ...")
	}
	switch args[0] {
	case "build":
		return build(args[1:])
	case "check":
		return check(args[1:])
	}
	return fmt.Errorf("unknown subcommand %q (build or check)", args[0])
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	out := fs.String("o", "", "the image tarball to write")
	name := fs.String("name", "", "the image's name:tag")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("usage: image build -o IMAGE.tar -name NAME:TAG BIN...")
	}
	var files []ociimage.File
	for _, p := range fs.Args() {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, ociimage.File{Path: binDir + filepath.Base(p), Mode: 0o755, Data: b})
	}
	spec := ociimage.Spec{Name: *name, OS: "linux", Arch: runtime.GOARCH, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Cmd: []string{"run", "--help"}, Dirs: []string{"/tmp"}, Created: time.Unix(0, 0)}
	var b bytes.Buffer
	if err := ociimage.Write(&b, spec, files); err != nil {
		return err
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Printf("image %s: %s (%d binaries, %.1f MB)\n", *name, *out, len(files), float64(b.Len())/1e6)
	return nil
}

func check(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: image check IMAGE.tar -want A,B -exec 'CMD ARGS'")
	}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	want := fs.String("want", "", "comma-separated binaries the image must hold in "+binDir)
	run := fs.String("exec", "", "a command to run with its binary taken from the image")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	img, err := ociimage.Read(f)
	if err != nil {
		return err
	}
	have := map[string][]byte{}
	for _, file := range img.Files {
		have[file.Path] = file.Data
	}
	for _, w := range strings.Split(*want, ",") {
		if w != "" && have[binDir+w] == nil {
			return fmt.Errorf("%s: no %s%s in the image", args[0], binDir, w)
		}
	}
	fmt.Printf("image %s (%s/%s): %d files, all of %s present, digests verified\n", img.Name, img.OS, img.Arch, len(img.Files), *want)
	if *run == "" {
		return nil
	}
	words := strings.Fields(*run)
	data := have[binDir+words[0]]
	if data == nil {
		return fmt.Errorf("-exec: no %s%s in the image", binDir, words[0])
	}
	dir, err := os.MkdirTemp("", "image-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, words[0])
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(bin, words[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("-exec %q from the image: %w", *run, err)
	}
	return nil
}
