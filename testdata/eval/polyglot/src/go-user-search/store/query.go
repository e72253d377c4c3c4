package store

import "database/sql"

// User is one row of the users table.
type User struct {
	ID   string
	Name string
}

// ByID loads one user.
func ByID(db *sql.DB, id string) (User, error) {
	var u User
	err := db.QueryRow("SELECT id, name FROM users WHERE id = $1", id).Scan(&u.ID, &u.Name)
	return u, err
}

// FindByName lists the users with exactly this name.
func FindByName(db *sql.DB, name string) ([]User, error) {
	q := "SELECT id, name FROM users WHERE name = '" + name + "'"
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []User
	for rows.Next() {
		var u User
		if err := rows.Scan(&u.ID, &u.Name); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
