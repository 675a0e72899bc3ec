-- The sample schema after every migration of SampleSchema (generated: do not edit;
-- run `swift run swiftdal-demo --make-fixtures Fixtures`).
CREATE TABLE "orders" (
    "id" INTEGER PRIMARY KEY,
    "user_id" INTEGER NOT NULL,
    "product" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL CHECK (quantity > 0),
    "unit_price" TEXT NOT NULL,
    "placed_at" TEXT NOT NULL,
    FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION
);

CREATE TABLE "swiftdal_migrations" (id TEXT PRIMARY KEY NOT NULL, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP);

CREATE TABLE "user_tags" (
    "user_id" INTEGER NOT NULL,
    "tag" TEXT NOT NULL,
    PRIMARY KEY ("user_id", "tag"),
    FOREIGN KEY ("user_id") REFERENCES "users" ("id") ON DELETE CASCADE ON UPDATE NO ACTION
) WITHOUT ROWID;

CREATE TABLE "users" (
    "id" INTEGER PRIMARY KEY,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL UNIQUE,
    "age" INTEGER NOT NULL DEFAULT 0 CHECK (age >= 0),
    "score" REAL NOT NULL DEFAULT 0,
    "bio" TEXT,
    "created_at" TEXT NOT NULL DEFAULT (CURRENT_TIMESTAMP)
, full_name TEXT, avatar BLOB);

CREATE INDEX "orders_user" ON "orders" ("user_id");

CREATE INDEX "users_age" ON "users" ("age");
