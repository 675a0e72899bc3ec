-- Seed data added with schema version 2 (full names, an avatar, tags).
UPDATE users SET full_name = 'Alice Martin', avatar = x'89504E47' WHERE id = 1;
UPDATE users SET full_name = 'Bob Chen'       WHERE id = 2;
UPDATE users SET full_name = 'Chloé Dubois'   WHERE id = 3;
UPDATE users SET full_name = 'Dmitri Ivanov'  WHERE id = 4;
UPDATE users SET full_name = 'Erin O''Brien'  WHERE id = 5;
UPDATE users SET full_name = 'Farah Haddad'   WHERE id = 6;
UPDATE users SET full_name = 'Goro Tanaka'    WHERE id = 7;

INSERT INTO user_tags (user_id, tag) VALUES
    (1, 'admin'), (1, 'early-adopter'), (3, 'early-adopter'), (6, 'vip'), (8, 'new');
