// Package manifest turns a stored Helm release manifest into the objects the
// pipeline works on, and relates them to each other.
//
// It owns three things, all pure:
//   - splitting the manifest (with Helm's own SplitManifests, so documents are
//     cut exactly as Helm cut them) into unstructured objects whose namespace
//     defaults to the release namespace, with a size limit;
//   - deciding which of those objects are *templates* (the only kinds the
//     controller may write, selected by group/KindPattern globs) and which are
//     *consumers* that reference templates (MachineDeployment, control planes,
//     Metal3MachineTemplate → Metal3DataTemplate);
//   - the table of where each consumer kind keeps its template references, in
//     every API version Cluster API and its providers serve, and rewriting them.
//
// MachineSets are deliberately absent from the reference table: they belong to
// their MachineDeployment and are never edited.
package manifest
