package io.sibyl.client.oracle;
