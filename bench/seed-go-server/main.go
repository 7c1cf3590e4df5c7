// The seed blog's server ("Serving Binary Files from SQLite", Libove Blog;
// ../../../shared/seeds/003_fd4364b6089bf9cd.txt in the project), kept as the
// blog wrote it: sqlx + go-sqlite3 with `SELECT data FROM files WHERE id = ?`
// on files(id VARCHAR(255) PRIMARY KEY, data BLOB NOT NULL) under
// /sqlite/{filename}, and http.FileServer under /dir/. The only change: the
// database path, the static folder and the listen address come from flags
// (defaults: the blog's files.db, ./static and :3000).
//
// Build: go build (cgo and a C compiler are needed for go-sqlite3).
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/jmoiron/sqlx"
	_ "github.com/mattn/go-sqlite3"
)

type sqlBinaryFile struct {
	Data []byte `db:"data"`
}

type sqlHandler struct {
	Db *sqlx.DB
}

func (h *sqlHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("filename")
	var sqlFile sqlBinaryFile
	h.Db.Get(&sqlFile, "SELECT data FROM files WHERE id = ?", id)
	w.Write(sqlFile.Data)
}

func main() {
	dbPath := flag.String("db", "files.db", "SQLite database with table files(id, data)")
	static := flag.String("static", "./static", "folder served under /dir/")
	listen := flag.String("listen", ":3000", "address to listen on")
	flag.Parse()

	db := sqlx.MustOpen("sqlite3", *dbPath)
	sql := &sqlHandler{Db: db}

	fs := http.StripPrefix("/dir/", http.FileServer(http.Dir(*static)))
	http.Handle("/dir/", fs)
	http.Handle("/sqlite/{filename}", sql)

	log.Print("Listening on " + *listen + "...")
	err := http.ListenAndServe(*listen, nil)
	if err != nil {
		log.Fatal(err)
	}
}
