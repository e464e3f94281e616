package main

import "syscall"

// mapPopulate asks mmap to fill the page tables up front.
const mapPopulate = syscall.MAP_POPULATE
