/**
 * so-fuzz: random, mutated and hostile frames against a running status oracle over real sockets, while well-behaved
 * clients check that their answers stay correct ({@link io.sibyl.bench.fuzz.SoFuzz}).
 */
package io.sibyl.bench.fuzz;
