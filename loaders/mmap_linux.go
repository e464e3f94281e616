package loaders

import "syscall"

// mapPopulate asks mmap to fill the page tables for the whole mapping.
const mapPopulate = syscall.MAP_POPULATE
