package prompts

import (
	"regexp"
	"slices"
	"strings"
)

// Names of the expert references, the contract cheat sheets that
// ExpertSystem appends on request.
const (
	RefORMQueries       = "orm_queries"       // lookups, eager loading, bulk writes, transactions
	RefOptionalNullable = "optional_nullable" // absent values across languages
)

// References lists every reference name in sorted order.
var References = []string{RefOptionalNullable, RefORMQueries}

// referenceSignals maps each reference to the expressions that call for it.
// Text matching ignore is removed from a line before re is tried.
var referenceSignals = []struct {
	ref    string
	re     *regexp.Regexp
	ignore *regexp.Regexp
}{
	{RefORMQueries, regexp.MustCompile(
		// Django, SQLAlchemy
		`\.objects\.|\b(select|prefetch)_related\(|\bget_object_or_404\(|\bQuerySet\b|\btransaction\.atomic\b|\bselect_for_update\(|` +
			`\bsession\.(query|get|execute|scalars?|add|commit|begin)\(|\b(joined|selectin|subquery)load\(|\brelationship\(|` +
			// Rails
			`\.find_by!?\(|\.where\(|\.includes\(:|\b(has_many|belongs_to|has_one)\b|\bActiveRecord\b|\.(update|delete)_all\b|` +
			// JPA, Spring Data
			`@(Entity|OneToMany|ManyToOne|OneToOne|ManyToMany|Transactional|Query)\b|\bEntityManager\b|\b(Jpa|Crud)Repository\b|` +
			`\.findById\(|\.getSingleResult\(|\.getReference(ById)?\(|` +
			// Go: database/sql, pgx, GORM
			`\bgorm\.|\.Preload\(|\.(First|Find|Take|Last)\(&|\.QueryRow(Context)?\(|\bErrNoRows\b|\.Scan\(&|` +
			// Prisma, TypeORM, Sequelize, Mongoose, Knex
			`\bprisma\.|\.find(Unique|First)(OrThrow)?\(|\.findMany\(|\.(update|delete)Many\(|\bgetRepository\(|\bcreateQueryBuilder\(|` +
			`\.findOne(By)?(OrFail)?\(|\.findByPk\(|\.findAll\(|\bsequelize\b|\bmongoose\b|\bknex\b`), nil},
	{RefOptionalNullable, regexp.MustCompile(
		// Java and Kotlin
		`\bOptional\b|\.orElse(Get|Throw)?\(|\.(isPresent|isEmpty|ifPresent)\(|\bofNullable\(|!!|\blateinit\b|\bas\?|\?:|` +
			// TypeScript and JavaScript, C#
			`\?\.|\?\?|\w!\.|\|\s*(undefined|null)\b|\b(undefined|null)\s*\||\bFirstOrDefault\(|\bTryGetValue\(|` +
			// Python
			`\bis( not)? None\b|[!=]= None\b|\|\s*None\b|\.get\(|\bgetattr\(|` +
			// Go
			`\b(\w+),\s*ok\s*:?=|\.\(\*?[\w.]+\)|\b[a-zA-Z_]\w*\s*[!=]=\s*nil\b|` +
			// Ruby
			`&\.\w|\.nil\?|\.fetch\(|\.dig\(`),
		// Go's error check and Django's raising get say nothing about
		// nullable values.
		regexp.MustCompile(`\berr\s*[!=]=\s*nil\b|\.objects\.get\(`)},
}

// DetectReferences reports which expert references apply to a change: the
// ORM sheet when data-access calls appear, the nullable sheet when optional
// or nullable APIs do. text is any rendering of the change (a unified diff,
// or the numbered diff the expert is shown); every line is read, unchanged
// context included, because the expert reads the code around the change.
// The result is sorted and may be empty.
func DetectReferences(text string) []string {
	lines := strings.Split(text, "\n")
	var refs []string
	for _, s := range referenceSignals {
		for _, l := range lines {
			if s.ignore != nil {
				l = s.ignore.ReplaceAllString(l, "")
			}
			if s.re.MatchString(l) {
				refs = append(refs, s.ref)
				break
			}
		}
	}
	slices.Sort(refs)
	return refs
}
