-- The benchmark table of Tests/Benchmarks/README.md (the C harness creates the same in rawbench.c).
-- ExplicitUser.swift is generated from it:
--   swift run swiftdal-gen --schema Tests/Benchmarks/swiftdal-bench/schema.sql --internal --stem users=Explicit --entity-suffix User --output Tests/Benchmarks/swiftdal-bench/ExplicitUser.swift
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL UNIQUE,
    age INTEGER NOT NULL,
    score REAL NOT NULL,
    bio TEXT
);
CREATE INDEX users_age ON users (age);
