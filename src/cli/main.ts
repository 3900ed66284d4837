#!/usr/bin/env node
console.log("rootwalk: under construction");
