-- SwiftDAL sample schema: users, their orders (foreign key to users) and their tags
-- (composite primary key). Used by the main job, the tests and the benchmarks.
CREATE TABLE IF NOT EXISTS users (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    full_name  TEXT,
    email      TEXT    NOT NULL UNIQUE,
    age        INTEGER NOT NULL DEFAULT 0 CHECK (age >= 0),
    score      REAL    NOT NULL DEFAULT 0,
    bio        TEXT,
    avatar     BLOB,
    created_at TEXT    NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS users_age ON users(age);

CREATE TABLE IF NOT EXISTS orders (
    id         INTEGER PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    product    TEXT    NOT NULL,
    quantity   INTEGER NOT NULL CHECK (quantity > 0),
    unit_price TEXT    NOT NULL,
    placed_at  TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS orders_user ON orders(user_id);

CREATE TABLE IF NOT EXISTS user_tags (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    tag     TEXT    NOT NULL,
    PRIMARY KEY (user_id, tag)
) WITHOUT ROWID;
