-- Seed data for schema version 1 (users without full_name/avatar, orders).
-- Dates in SwiftDAL's canonical UTC text form.
INSERT INTO users (id, name, email, age, score, bio, created_at) VALUES
    (1, 'alice',  'alice@example.com',  34, 88.5,  'Backend engineer; likes SQLite.', '2024-01-05 09:00:00.000'),
    (2, 'bob',    'bob@example.com',    27, 71.0,  NULL,                              '2024-01-06 10:30:00.000'),
    (3, 'chloé',  'chloe@example.com',  41, 93.25, 'Aime les données 📊',            '2024-02-11 14:15:00.000'),
    (4, 'dmitri', 'dmitri@example.com', 19, 55.0,  NULL,                              '2024-03-01 08:45:00.000'),
    (5, 'erin',   'erin@example.com',   52, 64.75, '100% uptime_fan',                 '2024-03-15 16:20:00.000'),
    (6, 'farah',  'farah@example.com',  30, 99.0,  NULL,                              '2024-04-02 11:05:00.000'),
    (7, 'goro',   'goro@example.com',   23, 47.5,  '日本語のプロフィール',              '2024-04-20 19:40:00.000'),
    (8, 'hana',   'hana@example.com',   36, 80.0,  NULL,                              '2024-05-09 07:55:00.000');

INSERT INTO orders (id, user_id, product, quantity, unit_price, placed_at) VALUES
    (1, 1, 'Keyboard',     1, '49.90',  '2024-05-01 10:00:00.000'),
    (2, 1, 'USB-C cable',  3, '7.99',   '2024-05-02 11:00:00.000'),
    (3, 2, 'Monitor',      2, '199.00', '2024-05-03 12:00:00.000'),
    (4, 3, 'Notebook',    10, '2.50',   '2024-05-04 13:00:00.000'),
    (5, 3, 'Pen',         20, '0.99',   '2024-05-04 13:05:00.000'),
    (6, 5, 'Chair',        1, '249.00', '2024-05-06 15:00:00.000'),
    (7, 6, 'Desk lamp',    2, '34.50',  '2024-05-07 16:00:00.000'),
    (8, 6, 'Keyboard',     1, '49.90',  '2024-05-08 17:00:00.000');
