# Thin aliases for dev.sh, which does all set-up itself.
.PHONY: train test lint bench setup
train:
	bash dev.sh train
test:
	bash dev.sh test
lint:
	bash dev.sh lint
bench:
	bash dev.sh bench --quick
setup:
	bash dev.sh setup
