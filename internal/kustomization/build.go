package kustomization

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/kustomize"
	buildfs "github.com/fluxcd/pkg/kustomize/filesys"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/resmap"
)

// Build builds dir, a folder under root, as kustomize-controller builds ks's
// path, and returns the objects in the build's order. ks may be nil: the
// folder alone, as a Kustomization with no settings builds it. Files are
// read only under root (kustomize-controller's boundary is the source's
// root); remote bases are refused, as kustomize-controller refuses them.
// The substitutions' ConfigMaps and Secrets (postBuild.substituteFrom) are
// read through c, from ks's namespace, as kustomize-controller reads them.
func Build(ctx context.Context, c client.Client, root, dir string, ks *kustomizev1.Kustomization) ([]*unstructured.Unstructured, error) {
	if ks == nil {
		ks = &kustomizev1.Kustomization{}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	if err != nil {
		return nil, err
	}
	u := unstructured.Unstructured{Object: obj}
	m, err := build(root, dir, u)
	if err != nil {
		return nil, err
	}
	if ks.Spec.PostBuild != nil {
		if err := substitute(ctx, c, u, ks, m); err != nil {
			return nil, err
		}
	}
	out := make([]*unstructured.Unstructured, 0, m.Size())
	for _, r := range m.Resources() {
		o, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		out = append(out, &unstructured.Unstructured{Object: o})
	}
	return out, nil
}

// build runs kustomize over dir with the Kustomization's settings written
// into a kustomization.yaml that lives in memory only, so the checkout is
// never changed.
func build(root, dir string, ks unstructured.Unstructured) (resmap.ResMap, error) {
	absRoot, err := realPath(root)
	if err != nil {
		return nil, err
	}
	absDir, err := realPath(dir)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(absRoot, absDir); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, fmt.Errorf("path %s is outside the repository root %s", dir, root)
	}
	if info, err := os.Stat(absDir); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("path %s is not a folder", dir)
	}
	gen := kustomize.NewGeneratorWithIgnore(absRoot, "", ks)
	data, kfile, _, err := gen.GenerateManifest(absDir)
	if err != nil {
		return nil, fmt.Errorf("failed to generate the kustomization of %s: %w", dir, err)
	}
	disk, err := buildfs.MakeFsOnDiskSecure(absRoot)
	if err != nil {
		return nil, err
	}
	fs := buildfs.MakeFsInMemory(disk)
	if err := fs.WriteFile(filepath.Join(absDir, filepath.Base(kfile)), data); err != nil {
		return nil, err
	}
	m, err := kustomize.Build(fs, absDir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build of %s failed: %w", dir, err)
	}
	return m, nil
}

// substitute runs the postBuild substitutions over every object, as
// kustomize-controller does: variables from substituteFrom (live
// ConfigMaps and Secrets; optional ones may be missing) overridden by the
// inline ones; an object labelled or annotated
// kustomize.toolkit.fluxcd.io/substitute: disabled is left alone.
func substitute(ctx context.Context, c client.Client, u unstructured.Unstructured, ks *kustomizev1.Kustomization, m resmap.ResMap) error {
	for _, r := range m.Resources() {
		out, err := kustomize.SubstituteVariables(ctx, c, u, r,
			kustomize.SubstituteWithAlways(ks.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways))
		if err != nil {
			return fmt.Errorf("postBuild substitution in %s failed: %w", r.CurId(), err)
		}
		if out != nil {
			if _, err := m.Replace(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// realPath is path made absolute with its symbolic links resolved, as the
// secure file system compares them.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", path, err)
	}
	return resolved, nil
}
