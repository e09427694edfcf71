// Package kustomization builds a folder of a fleet repository as
// kustomize-controller builds a Flux Kustomization's path: the Kustomization's
// own patches, images, namePrefix and targetNamespace over the folder's
// kustomization.yaml (or one generated from the folder's manifests), then its
// postBuild substitutions. preview reads a pull request's change from it.
//
// It uses the libraries kustomize-controller and `flux build` use
// (fluxcd/pkg/kustomize), so a build here is the build Flux will apply; the
// repository's files are read, never written.
package kustomization
