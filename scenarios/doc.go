// Package scenarios is baton's catalogue of DR stories -- WordPress and Gitea
// protected, relocated, failed over under partitions, drilled, moved a dozen
// times -- written once against bed.Bed so that every bed runs the same text.
//
// A scenario is a sequence of phases. After every phase the script asks the
// bed for broken invariants and checks the application's data where it runs
// now; at every phase boundary it may inject a fault chosen from the seed
// (ARCHITECTURE §7: "partitions injected in every phase"; FaultClasses lists
// the six classes). A run's Result
// (reports.Result) carries the phases, the fail-overs with their measured
// RPO, and every violation with its replay command.
package scenarios
