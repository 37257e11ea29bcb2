// Command pocketbase is PocketBase v0.40.4, unchanged, set up as the benchmark's baseline
// (bench/src/pocketbase.ts): what a small team would run instead of the content service.
//
// It is PocketBase's own CLI (`pocketbase serve --http … --dir …`). Before it listens, it makes
// sure of the schema and settings that make its work equal to ours:
//   - a `posts` collection: title (required, at most 200 characters), content (required, 10 to
//     50,000 characters), tags (JSON: a list, as our posts keep them), published (bool), author
//     (a relation to the `users` auth collection), and created/updated dates; indexed on
//     (published, created) for the public list, and on author;
//   - rules like our posts service's: anyone views and lists published posts, the author also
//     their drafts; only an authenticated user creates, as the author and as a draft; only the
//     author updates (never handing the post to someone else) or deletes;
//   - the users' passwords hashed at --bcrypt-cost (12, our identity service's BCRYPT_COST;
//     PocketBase's own default is bcrypt.DefaultCost, 10);
//   - logs stored from --log-min-level up (slog levels: -4 debug, 0 info, the default, which
//     stores a line for every request; 4 warn, as our services log with LOG_LEVEL=warn);
//   - no e-mail alert on a login from a new device (our identity service has none).
//
// Idempotent: a restart on the same --dir changes nothing.
package main

import (
	"database/sql"
	"errors"
	"log"

	"github.com/pocketbase/pocketbase"
	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/types"
)

func main() {
	app := pocketbase.New()

	var bcryptCost, logMinLevel int
	app.RootCmd.PersistentFlags().IntVar(&bcryptCost, "bcrypt-cost", 12, "bcrypt cost of the users' passwords")
	app.RootCmd.PersistentFlags().IntVar(&logMinLevel, "log-min-level", 0, "the lowest slog level stored in the logs")

	// After the system migrations (the users collection exists), before the listener: nothing is
	// served until the schema is in place.
	app.OnServe().BindFunc(func(e *core.ServeEvent) error {
		if err := setUp(e.App, bcryptCost, logMinLevel); err != nil {
			return err
		}
		return e.Next()
	})

	if err := app.Start(); err != nil {
		log.Fatal(err)
	}
}

func setUp(app core.App, bcryptCost, logMinLevel int) error {
	settings := app.Settings()
	if settings.Logs.MinLevel != logMinLevel {
		settings.Logs.MinLevel = logMinLevel
		if err := app.Save(settings); err != nil {
			return err
		}
	}

	users, err := app.FindCollectionByNameOrId("users")
	if err != nil {
		return err
	}
	password, ok := users.Fields.GetByName(core.FieldNamePassword).(*core.PasswordField)
	if !ok {
		return errors.New("the users collection has no password field")
	}
	if password.Cost != bcryptCost || users.AuthAlert.Enabled {
		password.Cost = bcryptCost
		users.AuthAlert.Enabled = false
		if err := app.Save(users); err != nil {
			return err
		}
	}

	if _, err := app.FindCollectionByNameOrId("posts"); err == nil {
		return nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	posts := core.NewBaseCollection("posts")
	posts.Fields.Add(
		&core.TextField{Name: "title", Required: true, Max: 200},
		&core.TextField{Name: "content", Required: true, Min: 10, Max: 50_000},
		&core.JSONField{Name: "tags", MaxSize: 2_000},
		&core.BoolField{Name: "published"},
		&core.RelationField{Name: "author", Required: true, MaxSelect: 1, CollectionId: users.Id, CascadeDelete: true},
		&core.AutodateField{Name: "created", OnCreate: true},
		&core.AutodateField{Name: "updated", OnCreate: true, OnUpdate: true},
	)
	readable := "published = true || (@request.auth.id != '' && author = @request.auth.id)"
	posts.ListRule = types.Pointer(readable)
	posts.ViewRule = types.Pointer(readable)
	posts.CreateRule = types.Pointer("@request.auth.id != '' && @request.body.author = @request.auth.id && " +
		"(@request.body.published:isset = false || @request.body.published = false)")
	posts.UpdateRule = types.Pointer("@request.auth.id != '' && author = @request.auth.id && " +
		"(@request.body.author:isset = false || @request.body.author = @request.auth.id)")
	posts.DeleteRule = types.Pointer("@request.auth.id != '' && author = @request.auth.id")
	posts.AddIndex("idx_posts_published_created", false, "published, created", "")
	posts.AddIndex("idx_posts_author", false, "author", "")
	return app.Save(posts)
}
