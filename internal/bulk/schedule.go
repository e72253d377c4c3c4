package bulk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/robfig/cron/v3"

	"github.com/reviewfleet/reviewfleet/internal/config"
	"github.com/reviewfleet/reviewfleet/store"
)

// Scheduled bulk reviews fire as tasks of this type on this queue, served
// by every scheduler process.
const (
	ScheduleTaskType = "bulk:schedule"
	ScheduleQueue    = "reviewfleet:schedule"
	// LeaderLock names the Postgres leader lock (store.HoldLeader) the
	// scheduler processes elect the firing one with.
	LeaderLock = "reviewfleet:bulk-schedule"
	// DefaultLeaderCheck is how often a follower tries the lock and the
	// leader checks it still holds it: a dead leader's successor fires
	// within this of the dead process's connection closing.
	DefaultLeaderCheck = 5 * time.Second
)

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Scheduler fires the configured scheduled bulk reviews. Every scheduler
// process runs one; the Postgres leader lock (store.HoldLeader), the one
// every singleton of the fleet is elected with, picks one leader, and only
// the leader runs asynq's PeriodicTaskManager, so a firing is enqueued once. Each
// firing task is also asynq.Unique, and its batch ID is derived from the
// schedule's name and firing time, so even a firing handled twice
// submits its batch once.
type Scheduler struct {
	// Redis is the fleet's Redis: the firings' queue.
	Redis asynq.RedisConnOpt
	// Store and Reviews submit each firing's batch (see Submitter), up to
	// SubmitConcurrency entries at once.
	Store             *store.Store
	Reviews           Reviews
	SubmitConcurrency int
	// GitHubAPIURL is the API that lists an organisation's pull requests
	// (empty: github.com's).
	GitHubAPIURL string
	Log          *slog.Logger
	Schedules    []config.Schedule
	// ID names this process in the logs (default: host and pid).
	ID string
	// LeaderCheck is how often the leader lock is tried or checked
	// (default DefaultLeaderCheck).
	LeaderCheck time.Duration
	// SyncInterval is how often the periodic task manager rereads the
	// schedules (default 10s).
	SyncInterval time.Duration
	// OnFiring, when set, is called with each firing's batch ID before
	// it is submitted (tests count firings with it).
	OnFiring func(name, batchID string)

	leader atomic.Bool
	rdb    redis.UniversalClient
}

func (s *Scheduler) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// IsLeader reports whether this process holds the leader lock now.
func (s *Scheduler) IsLeader() bool { return s.leader.Load() }

type firing struct {
	Name string `json:"name"`
}

// Run serves firings and, while it leads, fires the schedules, until ctx
// is cancelled.
func (s *Scheduler) Run(ctx context.Context) error {
	if len(s.Schedules) == 0 {
		<-ctx.Done()
		return nil
	}
	if s.ID == "" {
		host, _ := os.Hostname()
		s.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
	}
	every := s.LeaderCheck
	if every <= 0 {
		every = DefaultLeaderCheck
	}
	rdb, ok := s.Redis.MakeRedisClient().(redis.UniversalClient)
	if !ok {
		return errors.New("scheduled reviews: unexpected redis client type")
	}
	defer rdb.Close()
	s.rdb = rdb

	// Several firings may run at once, so that a long submission does not
	// hold the next firing back past its time (its batch is named by when
	// it first ran).
	srv := asynq.NewServer(s.Redis, asynq.Config{
		Concurrency: 4, Queues: map[string]int{ScheduleQueue: 1},
		TaskCheckInterval: 200 * time.Millisecond, LogLevel: asynq.WarnLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(ScheduleTaskType, s.handle)
	if err := srv.Start(mux); err != nil {
		return fmt.Errorf("serve scheduled reviews: %w", err)
	}
	defer srv.Shutdown()

	var mgr *asynq.PeriodicTaskManager
	var lead *store.Leadership
	stopMgr := func() {
		if mgr != nil {
			mgr.Shutdown()
			mgr = nil
		}
		s.leader.Store(false)
		if lead != nil {
			// Hand the lock over at once rather than when the session ends.
			lead.Release()
			lead = nil
		}
	}
	defer stopMgr()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		switch {
		case lead == nil:
			l, err := s.Store.HoldLeader(ctx, LeaderLock)
			if err != nil {
				s.log().Warn("scheduler leader lock", "err", err)
				break
			}
			if l == nil {
				break // another scheduler leads
			}
			m, err := s.newManager()
			if err == nil {
				err = m.Start()
			}
			if err != nil {
				l.Release()
				return fmt.Errorf("start scheduled reviews: %w", err)
			}
			lead, mgr = l, m
			s.leader.Store(true)
			s.log().Info("scheduler: leading scheduled reviews", "id", s.ID)
		default:
			if err := lead.Check(ctx); err != nil && ctx.Err() == nil {
				// The database released the lock with the session: another
				// scheduler may lead now, so stop firing at once.
				s.log().Warn("scheduler: lost the lead", "id", s.ID, "err", err)
				stopMgr()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *Scheduler) newManager() (*asynq.PeriodicTaskManager, error) {
	sync := s.SyncInterval
	if sync <= 0 {
		sync = 10 * time.Second
	}
	return asynq.NewPeriodicTaskManager(asynq.PeriodicTaskManagerOpts{
		RedisConnOpt:               s.Redis,
		PeriodicTaskConfigProvider: configProvider(s.Schedules),
		SyncInterval:               sync,
		SchedulerOpts:              &asynq.SchedulerOpts{Location: time.UTC, LogLevel: asynq.WarnLevel},
	})
}

type configProvider []config.Schedule

// GetConfigs turns the schedules into periodic tasks, each unique for
// half its period so a firing is enqueued once.
func (p configProvider) GetConfigs() ([]*asynq.PeriodicTaskConfig, error) {
	var out []*asynq.PeriodicTaskConfig
	for _, sc := range p {
		sched, err := cronParser.Parse(sc.Cron)
		if err != nil {
			return nil, fmt.Errorf("schedule %q: %w", sc.Name, err)
		}
		body, _ := json.Marshal(firing{Name: sc.Name})
		out = append(out, &asynq.PeriodicTaskConfig{
			Cronspec: sc.Cron,
			Task: asynq.NewTask(ScheduleTaskType, body, asynq.Queue(ScheduleQueue),
				asynq.Unique(max(period(sched)/2, time.Second)), asynq.MaxRetry(3)),
		})
	}
	return out, nil
}

func period(s cron.Schedule) time.Duration {
	a := s.Next(time.Now())
	return s.Next(a).Sub(a)
}

// FiringTime is the activation of a schedule that a firing first handled
// at now belongs to: the latest activation at or before now. An "@every"
// schedule has no fixed activations (they follow the start of the leading
// scheduler): its firing is the second it first ran.
func FiringTime(spec string, now time.Time) (time.Time, error) {
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return time.Time{}, err
	}
	if _, ok := sched.(cron.ConstantDelaySchedule); ok {
		return now.UTC().Truncate(time.Second), nil
	}
	now = now.UTC()
	t := sched.Next(now.AddDate(0, -13, 0))
	if t.After(now) {
		return time.Time{}, fmt.Errorf("schedule %q has no activation in the past 13 months", spec)
	}
	for n := sched.Next(t); !n.After(now); n = sched.Next(t) {
		t = n
	}
	return t, nil
}

// ScheduleBatchID is the batch of one firing of a schedule.
func ScheduleBatchID(name string, at time.Time) string {
	return uuid.NewSHA1(namespace, []byte("schedule\n"+name+"\n"+at.UTC().Format(time.RFC3339))).String()
}

func (s *Scheduler) handle(ctx context.Context, t *asynq.Task) error {
	var f firing
	if err := json.Unmarshal(t.Payload(), &f); err != nil {
		return fmt.Errorf("decode firing: %v: %w", err, asynq.SkipRetry)
	}
	var sc *config.Schedule
	for i := range s.Schedules {
		if s.Schedules[i].Name == f.Name {
			sc = &s.Schedules[i]
		}
	}
	if sc == nil {
		return fmt.Errorf("no schedule %q in this scheduler's configuration: %w", f.Name, asynq.SkipRetry)
	}
	at, err := s.firingTime(ctx, sc.Cron)
	if err != nil {
		return err
	}
	id := ScheduleBatchID(sc.Name, at)
	if s.OnFiring != nil {
		s.OnFiring(sc.Name, id)
	}
	spec, err := s.spec(ctx, *sc)
	if err != nil {
		return fmt.Errorf("scheduled review %s: %w", sc.Name, err)
	}
	spec.ID = id
	spec.Name = fmt.Sprintf("%s %s", sc.Name, at.UTC().Format(time.RFC3339))
	spec.Labels = map[string]string{"schedule": sc.Name, "fired_at": at.UTC().Format(time.RFC3339)}
	sub := &Submitter{Store: s.Store, Reviews: s.Reviews, Concurrency: s.SubmitConcurrency}
	if _, err := sub.Submit(ctx, spec); err != nil {
		return fmt.Errorf("scheduled review %s: %w", sc.Name, err)
	}
	return nil
}

// firingTime is the activation the firing being handled belongs to. It is
// computed when the firing's task first runs and kept in Redis under the
// task's ID, so a retry that lands after the schedule's next activation
// still resumes the same batch rather than starting a new one.
func (s *Scheduler) firingTime(ctx context.Context, spec string) (time.Time, error) {
	id, _ := asynq.GetTaskID(ctx)
	return s.firingTimeOf(ctx, spec, id, time.Now())
}

// firingTimeOf is firingTime for the task id handled at now.
func (s *Scheduler) firingTimeOf(ctx context.Context, spec, id string, now time.Time) (time.Time, error) {
	at, err := FiringTime(spec, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("%v: %w", err, asynq.SkipRetry)
	}
	if id == "" || s.rdb == nil {
		return at, nil
	}
	key := "reviewfleet:schedule:firing:" + id
	if err := s.rdb.SetNX(ctx, key, at.Format(time.RFC3339), 7*24*time.Hour).Err(); err != nil {
		return time.Time{}, fmt.Errorf("record firing time: %w", err)
	}
	v, err := s.rdb.Get(ctx, key).Result()
	if err != nil {
		return time.Time{}, fmt.Errorf("read firing time: %w", err)
	}
	return time.Parse(time.RFC3339, v)
}

func (s *Scheduler) spec(ctx context.Context, sc config.Schedule) (Spec, error) {
	if sc.Manifest != "" {
		f, err := os.Open(sc.Manifest)
		if err != nil {
			return Spec{}, fmt.Errorf("open manifest: %w", err)
		}
		defer f.Close()
		entries, err := ParseManifest(f)
		if err != nil {
			return Spec{}, fmt.Errorf("%s: %v: %w", sc.Manifest, err, asynq.SkipRetry)
		}
		return Spec{Source: "schedule:" + sc.Name + ":manifest:" + sc.Manifest, Entries: entries}, nil
	}
	entries, err := ListOrgPullRequests(ctx, sc.GitHubOrg, GitHubOptions{
		APIURL: s.GitHubAPIURL, Token: os.Getenv("GITHUB_TOKEN"), RepoFilter: sc.RepoFilter,
	})
	if err != nil {
		return Spec{}, err
	}
	src := "schedule:" + sc.Name + ":github:" + sc.GitHubOrg
	if sc.RepoFilter != "" {
		src += ":" + strings.TrimSpace(sc.RepoFilter)
	}
	return Spec{Source: src, Entries: entries}, nil
}
