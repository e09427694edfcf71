package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// controllerImage is the image name config/manager's Deployment names; the
// release replaces its tag with the digest it built.
const controllerImage = "ghcr.io/templatedrift/template-drift-controller"

// header opens install.yaml: how it is applied.
const header = "# template-drift-controller %s: the controller, its RBAC and its metrics Service, next to Flux.\n" +
	"#   kubectl apply -f install.yaml\n"

// writeInstall builds the kustomization config, as `kustomize build` does,
// with the controller's image replaced by image (REPOSITORY@DIGEST), as an
// overlay's `images:` entry does, and writes the result to out under a
// header naming version.
func writeInstall(config, image, version, out string) error {
	repo, digest, ok := strings.Cut(image, "@")
	if !ok || !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		return fmt.Errorf("the image %q is not pinned by digest (REPOSITORY@sha256:HEX)", image)
	}
	base, err := filepath.Abs(config)
	if err != nil {
		return err
	}
	overlay, err := os.MkdirTemp("", "tdc-install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(overlay)
	// Kustomize takes no absolute path as a resource.
	rel, err := filepath.Rel(overlay, base)
	if err != nil {
		return err
	}
	k := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: []string{rel},
		Images:    []types.Image{{Name: controllerImage, NewName: repo, Digest: digest}},
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), data, 0o644); err != nil {
		return err
	}
	opts := krusty.MakeDefaultOptions()
	// The base is outside the temporary overlay's directory.
	opts.LoadRestrictions = types.LoadRestrictionsNone
	res, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), overlay)
	if err != nil {
		return fmt.Errorf("failed to build %s: %w", config, err)
	}
	manifest, err := res.AsYaml()
	if err != nil {
		return err
	}
	if !strings.Contains(string(manifest), "image: "+image+"\n") {
		return fmt.Errorf("%s names no image %s to pin", config, controllerImage)
	}
	return os.WriteFile(out, append([]byte(fmt.Sprintf(header, version)), manifest...), 0o644)
}
