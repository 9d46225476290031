package io.sibyl.bench;
