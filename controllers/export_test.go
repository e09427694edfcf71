package controllers

// WatchRBAC is watchRBAC, for the tests of its watch on a real API server.
var WatchRBAC = watchRBAC
