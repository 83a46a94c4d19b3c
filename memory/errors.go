package memory

import "errors"

// ErrUnsupported: a copy or cast cannot represent the elements at all (a dtype pair without a
// conversion, sub-byte or opaque elements). adapters.ErrUnsupported is the same value, so
// errors.Is matches either name.
var ErrUnsupported = errors.New("memory: conversion not supported")
