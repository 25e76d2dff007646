#!/usr/bin/env node
// `kubectl deed ...`: kubectl runs an executable named kubectl-deed found on the PATH, with
// the arguments after `deed`. It is the same command; its help names itself `kubectl deed`.
import './deed.js';
