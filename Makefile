# Thin aliases for dev.sh, which does all set-up itself.
.PHONY: train test bench setup
train:
	bash dev.sh train
test:
	bash dev.sh test
bench:
	bash dev.sh bench --quick
setup:
	bash dev.sh setup
